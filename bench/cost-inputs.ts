/**
 * What the cost model prices, taken from one run's measured figures. `npm run bench` and
 * `npm run bench:render` both derive the cost from here, so a change to the model re-prices the
 * committed run without measuring again.
 */
import { COLD_STARTS_PER_MILLION, PRICES, UPSTREAM_SECONDS, costPerMillion, type CostInputs, type CostModel } from './cost-model';
import type { Results } from './results';

type CostFigures = Pick<Results, 'latency' | 'roundTrips' | 'resources' | 'coldStart' | 'consumerBatch'>;

export function costInputsOf(r: CostFigures, responseBytes: number): CostInputs {
  const stored = r.roundTrips.find((t) => t.mode === 'stored key');
  if (!stored) throw new Error('the run has no store counts for stored-key requests: nothing to price');
  const paced = r.latency.c1Paced;
  return {
    upstreamSeconds: UPSTREAM_SECONDS,
    // A Lambda instance serves one request at a time: the paced figure is the one it would see.
    proxyOverheadMs: Math.max(0, (paced.stored?.p50 ?? 0) - (paced.direct?.p50 ?? 0)),
    tailAfterResponseMs: stored.tailAfterResponseMs,
    cpuMsPerRequest: r.resources.c1Paced.stored?.cpuMsPerRequest,
    writeUnitsPerRequest: stored.writeUnits,
    ...(stored.billedWriteUnits !== undefined ? { billedWriteUnitsPerRequest: stored.billedWriteUnits } : {}),
    ...(stored.transactionItems !== undefined ? { transactionItemsPerRequest: stored.transactionItems } : {}),
    readUnitsPerRequest: stored.readUnits,
    responseBytes,
    coldStartsPerMillion: COLD_STARTS_PER_MILLION,
    coldStartInitMs: r.coldStart.importMedianMs,
    ...(r.consumerBatch ? { consumerBatch: r.consumerBatch } : {}),
  };
}

/** The cost of a stored run again: its answer size as recorded (older runs kept it only in the data-transfer line). */
export function repriceCost(r: CostFigures & { cost: CostModel }): CostModel {
  const bytes = r.cost.inputs?.responseBytes ?? Math.round((r.cost.dataTransfer.usdPerMillion / PRICES.dataOutPerGb) * 1000);
  return costPerMillion(costInputsOf(r, bytes));
}

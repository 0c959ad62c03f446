import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';

export interface BarSeries {
  label: string;
  color: string;
  values: number[];
}

interface Props {
  title: string;
  /** `YYYY-MM-DD`, one per bar. */
  days: string[];
  series: BarSeries[];
  format: (n: number) => string;
  testId: string;
}

const HEIGHT = 220;

function dayLabel(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  return date.toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/** One label every `step` bars, so labels never overlap however many days the period has. */
function labelSplits(count: number, width: number): number[] {
  const step = Math.max(1, Math.ceil(count / Math.max(1, Math.floor(width / 64))));
  const splits: number[] = [];
  for (let i = 0; i < count; i += step) splits.push(i);
  return splits;
}

/**
 * uPlot has no stacking: each series is drawn as the running total of itself and the series below it,
 * tallest first, so every band shows through above the one drawn over it. The legend shows raw values.
 */
function buildOptions(props: Props, width: number, onHover: (idx: number | null) => void): uPlot.Options {
  const { days, series, format } = props;
  const bars = uPlot.paths.bars!({ size: [0.7, 48], align: 0 });
  const drawn = series.map((s, i) => ({ ...s, index: i })).reverse();
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { points: { show: false }, drag: { x: false, y: false } },
    scales: {
      x: { time: false, range: () => [-0.5, Math.max(0, days.length - 1) + 0.5] },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      {
        stroke: '#5b6472',
        size: 28,
        grid: { show: false },
        ticks: { show: false },
        splits: (u) => labelSplits(days.length, u.bbox.width / devicePixelRatio),
        values: (_u, splits) => splits.map((i) => (days[i] ? dayLabel(days[i]) : '')),
      },
      {
        stroke: '#5b6472',
        size: 72,
        grid: { stroke: '#e6e8ec', width: 1 },
        ticks: { show: false },
        values: (_u, splits) => splits.map((v) => format(v)),
      },
    ],
    series: [
      {},
      ...drawn.map((s) => ({
        label: s.label,
        fill: s.color,
        stroke: s.color,
        width: 0,
        paths: bars,
        points: { show: false },
      })),
    ],
    hooks: {
      setCursor: [(u) => onHover(u.cursor.idx ?? null)],
    },
  };
}

function stackedData(days: string[], series: BarSeries[]): uPlot.AlignedData {
  const xs = days.map((_, i) => i);
  const running = days.map(() => 0);
  const stacks = series.map((s) => days.map((_, i) => (running[i] += s.values[i] ?? 0)));
  return [xs, ...stacks.reverse()];
}

export function StackedBars(props: Props) {
  const { title, days, series, format, testId } = props;
  const holder = useRef<HTMLDivElement>(null);
  const [hover, setHover] = useState<number | null>(null);
  const data = useMemo(() => stackedData(days, series), [days, series]);

  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const chart = new uPlot(buildOptions(props, element.clientWidth || 320, setHover), data, element);
    const observer = new ResizeObserver(() => chart.setSize({ width: element.clientWidth, height: HEIGHT }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
    // The chart is rebuilt when its data changes; props are read through `data` and `series`.
  }, [data]);

  const totals = series.map((s) => s.values.reduce((a, b) => a + b, 0));
  const summary = series.map((s, i) => `${s.label} ${format(totals[i])}`).join(', ');
  const heading = hover !== null && days[hover] ? dayLabel(days[hover]) : 'Whole period';

  return (
    <figure class="card chart" data-testid={testId}>
      <figcaption class="chart-title">{title}</figcaption>
      <div
        class="chart-canvas"
        ref={holder}
        role="img"
        aria-label={`${title} per day, stacked by provider. ${summary || 'No data.'}`}
      />
      <div class="chart-legend" aria-hidden="true">
        <span class="chart-legend-heading">{heading}</span>
        {series.map((s, i) => (
          <span class="chart-legend-item" key={s.label}>
            <span class="swatch" style={{ background: s.color }} />
            {s.label} {format(hover !== null ? s.values[hover] ?? 0 : totals[i])}
          </span>
        ))}
      </div>
    </figure>
  );
}

export function ChartSkeleton({ title }: { title: string }) {
  return (
    <figure class="card chart" aria-busy="true">
      <figcaption class="chart-title">{title}</figcaption>
      <div class="chart-canvas skeleton" />
      <div class="chart-legend" />
    </figure>
  );
}

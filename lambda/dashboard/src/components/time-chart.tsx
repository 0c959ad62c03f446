import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { themeColor, useThemeVersion } from '../theme';

export interface ChartSeries {
  label: string;
  color: string;
  /** One value per bucket; null where there is nothing to show (a line then has a gap). */
  values: (number | null)[];
}

interface Props {
  title: string;
  /** What one bucket is, for the screen-reader summary: "hour" or "day". */
  unit: string;
  /** One short axis label per bucket, e.g. "Nov 21" or "2 PM". */
  labels: string[];
  /** One whole name per bucket, for the legend while the pointer is over it. */
  titles: string[];
  series: ChartSeries[];
  /** `bars`: stacked bars (parts of a whole); `lines`: separate lines (e.g. average and p95). */
  kind: 'bars' | 'lines';
  format: (n: number) => string;
  /** Counts: the axis only ticks whole numbers, so 2 requests never read as 2, 2, 1, 1, 0. */
  integer?: boolean;
  testId: string;
  /** What the legend shows for the whole period (a line's "whole period" is not a sum). */
  summary?: (series: ChartSeries) => number;
}

const HEIGHT = 220;
const INTEGER_STEPS = [
  1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8,
  1e9,
];

/** One label every `step` buckets, so labels never overlap however many buckets the period has. */
function labelSplits(count: number, width: number): number[] {
  const step = Math.max(1, Math.ceil(count / Math.max(1, Math.floor(width / 64))));
  const splits: number[] = [];
  for (let i = 0; i < count; i += step) splits.push(i);
  return splits;
}

const sum = (values: (number | null)[]) => values.reduce<number>((a, b) => a + (b ?? 0), 0);

function buildOptions(props: Props, width: number, onHover: (idx: number | null) => void): uPlot.Options {
  const { labels, series, format, kind, integer } = props;
  const axis = themeColor('--chart-axis', '#5b6472');
  const grid = themeColor('--chart-grid', '#e6e8ec');
  const bars = uPlot.paths.bars!({ size: [0.7, 48], align: 0 });
  // uPlot has no stacking: each bar series is drawn as the running total of itself and those below it,
  // tallest first, so every band shows through above the one drawn over it. The legend shows raw values.
  const drawn = kind === 'bars' ? series.map((s) => s).reverse() : series;
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { points: { show: kind === 'lines' }, drag: { x: false, y: false } },
    scales: {
      x: { time: false, range: () => [-0.5, Math.max(0, labels.length - 1) + 0.5] },
      y: { range: (_u, _min, max) => [0, max > 0 ? (integer ? Math.max(Math.ceil(max * 1.1), 1) : max * 1.1) : 1] },
    },
    axes: [
      {
        stroke: axis,
        size: 28,
        grid: { show: false },
        ticks: { show: false },
        splits: (u) => labelSplits(labels.length, u.bbox.width / devicePixelRatio),
        values: (_u, splits) => splits.map((i) => labels[i] ?? ''),
      },
      {
        stroke: axis,
        size: 72,
        grid: { stroke: grid, width: 1 },
        ticks: { show: false },
        ...(integer ? { incrs: INTEGER_STEPS } : {}),
        values: (_u, splits) => splits.map((v) => format(v)),
      },
    ],
    series: [
      {},
      ...drawn.map((s) =>
        kind === 'bars'
          ? { label: s.label, fill: s.color, stroke: s.color, width: 0, paths: bars, points: { show: false } }
          : {
              label: s.label,
              stroke: s.color,
              width: 2,
              spanGaps: false,
              points: { show: labels.length <= 48, size: 5, fill: s.color },
            },
      ),
    ],
    hooks: {
      setCursor: [(u) => onHover(u.cursor.idx ?? null)],
    },
  };
}

function chartData(kind: Props['kind'], count: number, series: ChartSeries[]): uPlot.AlignedData {
  const xs = Array.from({ length: count }, (_, i) => i);
  if (kind === 'lines') return [xs, ...series.map((s) => s.values.map((v) => v ?? null))] as uPlot.AlignedData;
  const running = xs.map(() => 0);
  const stacks = series.map((s) => xs.map((i) => (running[i] += s.values[i] ?? 0)));
  return [xs, ...stacks.reverse()];
}

export function TimeChart(props: Props) {
  const { title, unit, labels, series, format, testId, kind } = props;
  const holder = useRef<HTMLDivElement>(null);
  const [hover, setHover] = useState<number | null>(null);
  const themeVersion = useThemeVersion();
  const data = useMemo(() => chartData(kind, labels.length, series), [kind, labels, series]);
  const [axisColor, setAxisColor] = useState('');

  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const chart = new uPlot(buildOptions(props, element.clientWidth || 320, setHover), data, element);
    setAxisColor(themeColor('--chart-axis', ''));
    const observer = new ResizeObserver(() => chart.setSize({ width: element.clientWidth, height: HEIGHT }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
    // Rebuilt when the data or the theme's colours change; other props are read through `data`.
  }, [data, themeVersion]);

  const whole = props.summary ?? ((s: ChartSeries) => sum(s.values));
  const describe = series.map((s) => `${s.label} ${format(whole(s))}`).join(', ');
  const heading = hover !== null && props.titles[hover] ? props.titles[hover] : 'Whole period';
  const valueAt = (s: ChartSeries) => (hover !== null ? s.values[hover] : whole(s));

  return (
    <figure class="card chart" data-testid={testId} data-buckets={labels.length} data-axis-color={axisColor}>
      <figcaption class="chart-title">{title}</figcaption>
      <div
        class="chart-canvas"
        ref={holder}
        role="img"
        aria-label={`${title}, per ${unit}${kind === 'bars' && series.length > 1 ? ', stacked' : ''}. ${describe || 'No data.'}`}
      />
      <div class="chart-legend" aria-hidden="true">
        <span class="chart-legend-heading">{heading}</span>
        {series.map((s) => {
          const value = valueAt(s);
          return (
            <span class="chart-legend-item" key={s.label}>
              <span class="swatch" style={{ background: s.color }} />
              {s.label} {value === null || value === undefined ? '—' : format(value)}
            </span>
          );
        })}
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

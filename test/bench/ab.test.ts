/**
 * `npm run bench:ab`'s arithmetic and wiring (never its timings): the options it reads, the order
 * the sides take turns in, and the ratios it reports per round and over the rounds.
 */
import { formatLevel, median, parseAbArgs, summariseLevel, turnOrder } from '../../bench/ab';
import { LOCAL_SERVER_NODE_FLAGS } from '../../bench/processes';

describe('options', () => {
  test('by default HEAD is compared with the working tree, both with npm start\'s Node flags', () => {
    const options = parseAbArgs([]);
    expect(options.before).toEqual({ source: 'HEAD', nodeFlags: LOCAL_SERVER_NODE_FLAGS });
    expect(options.after).toEqual({ source: '.', nodeFlags: LOCAL_SERVER_NODE_FLAGS });
    expect(options.rounds).toBeGreaterThanOrEqual(3);
    expect(options.paced.pauseMs).toBeGreaterThan(0);
    expect(options.profile).toBe(false);
  });

  test('sources, flag sets (an empty one meaning Node\'s defaults), counts and the profile are read', () => {
    const options = parseAbArgs(
      ['--before', 'main~2', '--after', 'build/x.mjs', '--before-flags', '', '--after-flags', ' --max-semi-space-size=8  --heap-growing-percent=50 ', '--rounds', '5', '--paced', '120', '--c16', '900', '--profile'],
      ['--default'],
    );
    expect(options.before).toEqual({ source: 'main~2', nodeFlags: [] });
    expect(options.after).toEqual({ source: 'build/x.mjs', nodeFlags: ['--max-semi-space-size=8', '--heap-growing-percent=50'] });
    expect(options.rounds).toBe(5);
    expect(options.paced.count).toBe(120);
    expect(options.c16.count).toBe(900);
    expect(options.profile).toBe(true);
  });

  test('a mistyped option or count is refused rather than ignored', () => {
    expect(() => parseAbArgs(['--round', '3'])).toThrow(/unknown option --round/);
    expect(() => parseAbArgs(['--rounds', '0'])).toThrow(/positive whole number/);
    expect(() => parseAbArgs(['--paced', '2.5'])).toThrow(/positive whole number/);
    expect(() => parseAbArgs(['--before'])).toThrow(/wants a value/);
  });
});

test('the sides take turns in an order that flips every round, the pipe first', () => {
  expect(turnOrder(0)).toEqual(['pipe', 'before', 'after']);
  expect(turnOrder(1)).toEqual(['pipe', 'after', 'before']);
  expect(turnOrder(2)).toEqual(turnOrder(0));
});

describe('ratios', () => {
  const rounds = [
    { before: 4, after: 3, pipe: 1 },
    { before: 5, after: 4, pipe: 2 },
    { before: 2, after: 2.5, pipe: 1 },
  ];

  test('after/before per round, their median and geometric mean, and each side over the same round\'s pipe', () => {
    const s = summariseLevel(rounds);
    expect(s.ratios).toEqual([0.75, 0.8, 1.25]);
    expect(s.medianRatio).toBe(0.8);
    expect(s.geometricMeanRatio).toBeCloseTo(Math.cbrt(0.75 * 0.8 * 1.25), 12);
    expect(s.beforeOverPipe).toEqual([4, 2.5, 2]);
    expect(s.afterOverPipe).toEqual([3, 2, 2.5]);
  });

  test('the median of an even count is the mean of the middle two; of nothing, NaN', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  test('the printed table shows every round\'s ratio and the median', () => {
    const text = formatLevel('c=16', rounds);
    expect(text.split('\n').filter((line) => line.includes('round '))).toHaveLength(3);
    expect(text).toContain('after/before 0.750');
    expect(text).toContain('after/before 1.250');
    expect(text).toContain('median 0.800');
  });
});

test('npm run bench:ab runs this script', async () => {
  const { readFileSync } = await import('node:fs');
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
  expect(scripts['bench:ab']).toBe('tsx bench/ab.ts');
});

/**
 * CloudWatch's Embedded Metric Format, written from its published specification ("Specification:
 * Embedded metric format", CloudWatch User Guide), not from the proxy's output: the root holds an
 * `_aws` metadata object with a millisecond `Timestamp` and `CloudWatchMetrics`, a list of metric
 * directives, each with a `Namespace`, `Dimensions` (a list of dimension sets, each a list of at most
 * 30 member names) and `Metrics` (at most 100 definitions of a `Name`, an optional `Unit` from
 * CloudWatch's list and an optional `StorageResolution` of 1 or 60). Every dimension a set names
 * must be a string member of the root; every metric a definition names must be a number member, or
 * a list of at most 100 numbers.
 */
import Ajv from 'ajv';

const UNITS = [
  'Seconds',
  'Microseconds',
  'Milliseconds',
  'Bytes',
  'Kilobytes',
  'Megabytes',
  'Gigabytes',
  'Terabytes',
  'Bits',
  'Kilobits',
  'Megabits',
  'Gigabits',
  'Terabits',
  'Percent',
  'Count',
  'Bytes/Second',
  'Kilobytes/Second',
  'Megabytes/Second',
  'Gigabytes/Second',
  'Terabytes/Second',
  'Bits/Second',
  'Kilobits/Second',
  'Megabits/Second',
  'Gigabits/Second',
  'Terabits/Second',
  'Count/Second',
  'None',
];

export const EMF_SCHEMA = {
  type: 'object',
  required: ['_aws'],
  properties: {
    _aws: {
      type: 'object',
      required: ['Timestamp', 'CloudWatchMetrics'],
      properties: {
        Timestamp: { type: 'integer', minimum: 0 },
        CloudWatchMetrics: {
          type: 'array',
          items: {
            type: 'object',
            required: ['Namespace', 'Dimensions', 'Metrics'],
            properties: {
              Namespace: { type: 'string', minLength: 1, maxLength: 1024, pattern: '.*[^\\s].*' },
              Dimensions: {
                type: 'array',
                items: {
                  type: 'array',
                  maxItems: 30,
                  items: { type: 'string', minLength: 1, maxLength: 250 },
                },
              },
              Metrics: {
                type: 'array',
                maxItems: 100,
                items: {
                  type: 'object',
                  required: ['Name'],
                  properties: {
                    Name: { type: 'string', minLength: 1, maxLength: 1024 },
                    Unit: { type: 'string', enum: UNITS },
                    StorageResolution: { type: 'integer', enum: [1, 60] },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

const validate = new Ajv({ allErrors: true }).compile(EMF_SCHEMA);

interface Directive {
  Dimensions: string[][];
  Metrics: { Name: string }[];
}

/** The problems of one log line as an EMF document; empty when it is valid. */
export function emfProblems(line: string): string[] {
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return ['not JSON'];
  }
  if (!validate(document)) return (validate.errors ?? []).map((e) => `${e.dataPath} ${e.message}`);
  const problems: string[] = [];
  const directives = (document._aws as { CloudWatchMetrics: Directive[] }).CloudWatchMetrics;
  for (const directive of directives) {
    for (const name of directive.Dimensions.flat())
      if (typeof document[name] !== 'string') problems.push(`dimension ${name} is not a string member of the root`);
    for (const { Name } of directive.Metrics) {
      const value = document[Name];
      const numbers = Array.isArray(value) ? value : [value];
      if (numbers.length === 0 || numbers.length > 100 || !numbers.every((n) => typeof n === 'number'))
        problems.push(`metric ${Name} is not a number or a list of up to 100 numbers at the root`);
    }
  }
  return problems;
}

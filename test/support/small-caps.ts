import type { DailyCaps } from '../../lambda/usage/dynamodb/daily-caps';
import { MAX_LISTED_TAG_KEYS, MAX_LISTED_TAG_VALUES, MAX_LISTED_VALUES } from '../../lambda/usage/rollups/summary';

/**
 * Per-day caps for the tests that fold past them (`DynamoUsageStats`'s `caps`): crossing the
 * product's (300 requesters, 1,000 rollup items, …) takes thousands of rows through DynamoDB Local.
 * Each is just above what a summary lists, so "the costliest listed, (other) sums the rest" and
 * "past the day's cap" both still happen; the rollup items above the two labels', so the labels'
 * caps are reached first, as with the product's.
 */
export const SMALL_DAILY_CAPS: DailyCaps = Object.freeze({
  requesters: MAX_LISTED_VALUES + 20,
  models: MAX_LISTED_VALUES + 10,
  combinations: 250,
  tagKeys: MAX_LISTED_TAG_KEYS + 1,
  tagValues: MAX_LISTED_TAG_VALUES + 5,
});

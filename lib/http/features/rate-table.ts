// The table lives in fw-http/cache, where MemoryRateStore keeps one per rule; @RateLimit counts
// with it directly when the app has no rate store.
export {
  RateTable,
  RATE_ADMITTED,
  RATE_OVER,
  RATE_FULL,
  type RateVerdict,
  type RateTableOptions,
} from '../../cache/rate-table';

/**
 * @kode/session: where sessions live (the `SessionStore` contract and an in-memory store), and
 * everything derived from a session's history: the replay as protocol events, forks, and a
 * self-contained HTML transcript. This entry imports nothing from Node, so it runs in browsers,
 * workers, Bun and Deno; the file store is on `@kode/session/file`. (The messages a model call
 * sends for a history come from `toProviderMessages` in `@kode/protocol/helpers`.)
 */
export {
  CorruptHistoryError,
  type LockHolder,
  type LockOwner,
  SessionError,
  type SessionErrorCode,
  SessionLockedError,
  sessionGoneWhile,
  sessionNotFound,
  storeClosed,
} from './errors.js'
export { type ExportHtmlOptions, exportHtml } from './export/export-html.js'
export { type ExportSessionHtmlOptions, exportSessionHtml } from './export/export-session.js'
export type { ImageUrls } from './export/image-urls.js'
export type { ImageResolver } from './export/render-parts.js'
export { type ForkOptions, forkSession } from './fork.js'
export {
  createReplayDeriver,
  deriveReplayEvents,
  type ReplayDeriver,
  type ReplayOptions,
  type SubSessionHistories,
} from './replay/derive-replay.js'
export {
  loadSubSessions,
  type ReplaySessionOptions,
  replaySession,
  replaySessionBatches,
} from './replay/load-sub-sessions.js'
export { assertSessionId, isValidSessionId } from './session-id.js'
export {
  assertSessionInit,
  assertSessionPatch,
  type CreateSessionInit,
  ForkOrigin,
  SessionInfo,
  type SessionPatch,
  type StoreClock,
  SubAgentLink,
} from './session-info.js'
export { encodeRecords, recordBytesOver, unstampedRecordBytesOver } from './store/encode-records.js'
export { followStart } from './store/follow-start.js'
export {
  checkListOptions,
  type ListSessionsOptions,
  type ListSessionsQuery,
  pageSessions,
} from './store/list-options.js'
export { createMemorySessionStore, type MemorySessionStoreOptions } from './store/memory-store.js'
export type {
  FollowedRecord,
  FollowOptions,
  ReadBatchesOptions,
  SessionLease,
  SessionStore,
  StoreWarning,
} from './store/session-store.js'
export { DEFAULT_READ_BATCH_SIZE, readBatchSize } from './store/session-store.js'
export { warningReporter } from './store/warning-reporter.js'

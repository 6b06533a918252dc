/**
 * @kode/session: where sessions live (a file store by default, an in-memory one for tests), and
 * everything derived from a session's history: the provider view for the next model call, the
 * replay as protocol events, forks, and a self-contained HTML transcript.
 */
export {
  CorruptHistoryError,
  type LockHolder,
  type LockOwner,
  SessionError,
  type SessionErrorCode,
  SessionLockedError,
} from './errors.js'
export { type ExportHtmlOptions, exportHtml } from './export/export-html.js'
export type { ImageResolver } from './export/render-parts.js'
export { type ForkOptions, forkSession } from './fork.js'
export {
  INCOMPLETE_CALL_TEXT,
  MISSING_RESULT_TEXT,
  type ProviderMessageFormat,
  ProviderView,
  type ProviderViewOptions,
  toProviderMessages,
} from './provider-view.js'
export { deriveReplayEvents, type ReplayOptions, type SubSessionHistories } from './replay/derive-replay.js'
export { loadSubSessions, replaySession } from './replay/load-sub-sessions.js'
export { assertSessionId, isValidSessionId } from './session-id.js'
export {
  type CreateSessionInit,
  ForkOrigin,
  SessionInfo,
  type SessionPatch,
  type StoreClock,
  SubAgentLink,
} from './session-info.js'
export { createFileSessionStore, type FileSessionStoreOptions } from './store/file/file-store.js'
export { createMemorySessionStore, type MemorySessionStoreOptions } from './store/memory-store.js'
export type { SessionLease, SessionStore, StoreWarning } from './store/session-store.js'

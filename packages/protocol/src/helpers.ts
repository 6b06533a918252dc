/**
 * @kode/protocol/helpers: the package's plain functions, without its schemas or codec, including
 * the one rule that turns a history into the messages of a model call (`toProviderMessages`). Importing
 * it loads no TypeBox and builds no schema, so a package that needs only these functions at run
 * time (as @kode/providers does) keeps its own import cheap. The main entry exports them too.
 */
export { approvalResponseId } from './approval-response-id.js'
export { cutText, graphemeBoundary } from './cut-text.js'
export {
  citationsOf,
  distinctSources,
  isInterrupt,
  isRefusal,
  isRole,
  joinText,
  joinThinking,
  serverToolsOf,
  toolCallsOf,
  toolResultEventStatus,
} from './message-helpers.js'
export {
  INCOMPLETE_CALL_TEXT,
  MISSING_RESULT_TEXT,
  modeBlock,
  startsMessageGroup,
  toProviderMessages,
} from './provider-messages.js'
export { redactCredentials } from './redact-credentials.js'
export { redactUrlSecrets } from './redact-url-secrets.js'
export { type ServerToolView, serverToolView } from './server-tool-view.js'
export { sessionCallKey } from './session-call-key.js'
export { addUsage, computeCostUsd, USAGE_KEYS } from './usage-arithmetic.js'

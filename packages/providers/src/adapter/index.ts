/**
 * @kode/providers/adapter: everything needed to write a provider for a new wire api. The spec an
 * adapter implements (`WireAdapter`: two mappings around the shared transport), versioned by
 * `ADAPTER_SPEC_VERSION`, and the kit the built-in adapters are made of: the message-mapping
 * prologue (`prepareMessages`, or `MessagePreparer` across a client's requests), per-message caching
 * (of conversions, `MessageCache`, and of their JSON, `JsonTextCache`), the wire items of a
 * history's settled part kept across requests (`SettledItems`), images, tool-call arguments and ids,
 * reasoning hand-off, typed errors, and the redaction that keeps keys out of them (`redact`,
 * `redactCause`, `headerCredentials`; @kode/mcp uses the same). Register the factory with `registerProvider` from
 * `@kode/providers`. See docs/writing-a-provider.md.
 */

export type {
  AnthropicApiOptions,
  ApiOptions,
  ApiOptionsMap,
  ChatApiOptions,
  ResponsesApiOptions,
} from '../api-options.js'
export { bearerAuth } from '../apis/shared/auth.js'
export { type ImageFiles, imageUrlOf, parseDataUrl, toBase64 } from '../apis/shared/images.js'
export { JsonTextCache, type KnownRun } from '../apis/shared/json-text-cache.js'
export { MessageCache } from '../apis/shared/message-cache.js'
export { MessagePreparer } from '../apis/shared/message-preparer.js'
export {
  type PreparedMessages,
  type PrepareMessagesOptions,
  prepareMessages,
  type ViewEntry,
} from '../apis/shared/prepare-messages.js'
export {
  type FinalEnd,
  type MakeItems,
  SettledItems,
  type WireItems,
} from '../apis/shared/settled-items.js'
export {
  defaultThinkingAsText,
  isOwnMessage,
  type Speaker,
  signatureFits,
  thinkingRenderer,
} from '../apis/shared/thinking.js'
export { argumentsObject, sendableArguments } from '../apis/shared/tool-arguments.js'
export {
  fitToolCallId,
  TOOL_CALL_ID_RULES,
  type ToolCallIdRule,
  toolCallIdFitter,
} from '../apis/shared/tool-call-ids.js'
export {
  lastTurnStart,
  type Turn,
  type TurnConverters,
  userAssistantTurns,
} from '../apis/shared/turns.js'
export { headerCredentials } from '../transport/credentials.js'
export {
  ProviderError,
  type ProviderErrorInit,
  redact,
  redactCause,
  type Secrets,
  type TransportErrorCode,
} from '../transport/errors.js'
export {
  type ErrorContext,
  type ErrorPayloadFields,
  errorFromPayload,
  parseEventJson,
  readErrorPayload,
  transportError,
} from '../transport/failures.js'
export { JsonText } from '../transport/json-text.js'
export type { SseEvent } from '../transport/sse.js'
export type { ClientConfig, LLMRequest, ModelInfo, ReasoningEffort } from '../types.js'
export {
  ADAPTER_SPEC_VERSION,
  type AdapterConfig,
  type Completion,
  type EventMapper,
  type ProviderFactory,
  type ResponseBuilder,
  type SignatureOptions,
  type TextItem,
  type WireAdapter,
  type WireRequest,
} from './spec.js'

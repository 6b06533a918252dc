/**
 * @kode/providers: one client per wire API over raw `fetch` and server-sent events, with
 * retries, typed errors and a model catalog.
 */

export type { Outcome } from './accumulate.js'
export type {
  AdapterConfig,
  Completion,
  EventMapper,
  ProviderFactory,
  ResponseBuilder,
  SignatureOptions,
  TextItem,
  WireAdapter,
  WireRequest,
} from './adapter.js'
export {
  type AnthropicUsage,
  anthropicStopReason,
  anthropicUsage,
  createAnthropicEventMapper,
} from './apis/anthropic/events.js'
export { ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, anthropic } from './apis/anthropic/index.js'
export {
  type AnthropicBlock,
  type AnthropicBodyOptions,
  type AnthropicMessage,
  type AnthropicMessageOptions,
  anthropicBody,
  type CacheControl,
  createAnthropicMessageMapper,
} from './apis/anthropic/request.js'
export {
  createGoogleEventMapper,
  type GoogleChunk,
  type GoogleUsage,
  googleStopReason,
  googleUsage,
} from './apis/google/events.js'
export { GOOGLE_BASE_URL, google } from './apis/google/index.js'
export { type PartialArg, parseJsonPath, StreamedArgs } from './apis/google/partial-args.js'
export {
  createGoogleMessageMapper,
  FOREIGN_CALL_SIGNATURE,
  type GoogleContent,
  type GoogleMessageOptions,
  type GooglePart,
  googleBody,
} from './apis/google/request.js'
export {
  type ChatChunk,
  type ChatDelta,
  type ChatUsage,
  chatStopReason,
  chatUsage,
  createChatEventMapper,
  mapChatChunk,
} from './apis/openai-chat/events.js'
export {
  bearerAuth,
  type ChatAdapterOptions,
  chatAdapter,
  OPENAI_BASE_URL,
  openaiChat,
} from './apis/openai-chat/index.js'
export {
  type ChatBodyOptions,
  type ChatContentPart,
  type ChatDialect,
  type ChatMessage,
  type ChatToolCall,
  chatBody,
  chatReasoningReplay,
  createChatMessageMapper,
  type ReasoningReplay,
} from './apis/openai-chat/request.js'
export {
  createResponsesEventMapper,
  type ResponsesOutputItem,
  type ResponsesResponse,
  type ResponsesUsage,
  responsesStopReason,
  responsesUsage,
} from './apis/openai-responses/events.js'
export { openaiResponses, RESPONSES_DEFAULT_INCLUDE } from './apis/openai-responses/index.js'
export {
  createResponsesMessageMapper,
  type ResponsesBodyOptions,
  type ResponsesContent,
  type ResponsesInputItem,
  type ResponsesMessageOptions,
  responsesBody,
} from './apis/openai-responses/request.js'
export { createOpenRouterEventMapper } from './apis/openrouter/events.js'
export { OPENROUTER_BASE_URL, openrouter } from './apis/openrouter/index.js'
export { openrouterBody, openrouterReasoningReplay } from './apis/openrouter/request.js'
export { type ImageFiles, imageUrlOf, parseDataUrl, readImageFiles, toBase64 } from './apis/shared/images.js'
export { MessageCache } from './apis/shared/message-cache.js'
export {
  type ProviderView,
  providerView,
  syntheticResultText,
  type ViewEntry,
} from './apis/shared/provider-view.js'
export {
  defaultThinkingAsText,
  isOwnMessage,
  type Speaker,
  signatureFits,
  thinkingRenderer,
} from './apis/shared/thinking.js'
export { argumentsObject, sendableArguments } from './apis/shared/tool-arguments.js'
export {
  fitToolCallId,
  TOOL_CALL_ID_RULES,
  type ToolCallIdRule,
  toolCallIdFitter,
} from './apis/shared/tool-call-ids.js'
export { catalogModels, lookupModel } from './catalog/lookup.js'
export { createClient } from './client.js'
export { availableApis, registerProvider } from './registry.js'
export {
  ProviderError,
  type ProviderErrorInit,
  type ProviderErrorKind,
  redact,
  type TransportErrorCode,
} from './transport/errors.js'
export {
  type ErrorContext,
  type ErrorPayloadFields,
  errorFromPayload,
  errorFromResponse,
  errorFromThrown,
  parseEventJson,
  readErrorPayload,
  transportError,
} from './transport/failures.js'
export { isContextOverflow } from './transport/overflow.js'
export {
  isRetryableCode,
  isRetryableStatus,
  parseRetryAfter,
  type RetryOptions,
  type RetryPolicy,
  resolveRetryPolicy,
  retryAllowed,
  retryDelayMs,
} from './transport/retry.js'
export { SseDecoder, type SseEvent } from './transport/sse.js'
export type {
  ClientConfig,
  LLMClient,
  LLMRequest,
  ModelInfo,
  ReasoningControl,
  ReasoningEffort,
  RetryInfo,
  StreamOptions,
} from './types.js'

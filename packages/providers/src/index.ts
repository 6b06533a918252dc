/**
 * @kode/providers: one client per wire API over raw `fetch` and server-sent events, with
 * retries, typed errors and a model catalog. Writing a provider for another wire api: see
 * `@kode/providers/adapter`; testing without the internet: `@kode/providers/testing`.
 */

export type { ProviderFactory } from './adapter/spec.js'
export type {
  AnthropicApiOptions,
  ApiOptions,
  ApiOptionsMap,
  ChatApiOptions,
  ResponsesApiOptions,
} from './api-options.js'
export { anthropic } from './apis/anthropic/index.js'
export { google } from './apis/google/index.js'
export { openaiChat } from './apis/openai-chat/index.js'
export { openaiResponses } from './apis/openai-responses/index.js'
export { openrouter } from './apis/openrouter/index.js'
export { catalogModels, lookupModel } from './catalog/lookup.js'
export { createClient } from './client.js'
export { availableApis, registerProvider } from './registry.js'
export { readBatches, readReadyItems } from './transport/batches.js'
export {
  ProviderError,
  type ProviderErrorInit,
  type ProviderErrorKind,
  type TransportErrorCode,
} from './transport/errors.js'
export { isContextOverflow } from './transport/overflow.js'
export {
  type RetryOptions,
  type RetryPolicy,
  resolveRetryPolicy,
  retryAllowed,
  retryDelayMs,
} from './transport/retry.js'
export type {
  ClientConfig,
  FixedTemperature,
  LLMClient,
  LLMRequest,
  ModelInfo,
  ReasoningControl,
  ReasoningEffort,
  ResponseFormat,
  RetryInfo,
  StreamOptions,
} from './types.js'

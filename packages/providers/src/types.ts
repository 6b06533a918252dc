import type { AssistantMessage, Message, ModelPrices, StreamItem, ToolDefinition } from '@kode/protocol'
import type { Completion } from './adapter/spec.js'
import type { ApiOptionsMap } from './api-options.js'
import type { ProviderError } from './transport/errors.js'
import type { RetryOptions } from './transport/retry.js'

/** One model call: the history and what the model may do. */
export interface LLMRequest {
  /** The typed history. System messages may appear; developer messages are folded into the preceding user or tool message. */
  messages: readonly Message[]
  /** System prompt, sent before the text of any system messages. */
  system?: string | undefined
  tools?: readonly ToolDefinition[] | undefined
  /** Upper bound of generated tokens (reasoning included where the provider counts it so). */
  maxOutputTokens?: number | undefined
  temperature?: number | undefined
  /** Ask for reasoning: an effort level, or a token budget (Anthropic, Gemini 2.5, OpenRouter). */
  reasoning?: { effort?: ReasoningEffort | undefined; budgetTokens?: number | undefined } | undefined
  toolChoice?: 'auto' | 'none' | 'required' | { name: string } | undefined
  /**
   * Ask for the final answer as JSON valid against a schema, with the api's native mechanism
   * (see {@link ResponseFormat}). The answer arrives as the response's text on every api.
   */
  responseFormat?: ResponseFormat | undefined
  /**
   * Provider-specific request-body fields, keyed by api (`{ anthropic: { top_k: 40 } }`). The
   * fields under the client's api are set on the top level of the body the adapter built, over
   * its own; the other apis' entries are ignored, so one request can carry options for several.
   */
  providerOptions?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
  /**
   * Tools the provider runs itself, keyed by api, each as that api's `tools` array takes it:
   * `{ anthropic: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }], google:
   * [{ codeExecution: {} }], 'openai-responses': [{ type: 'web_search' }] }`. The entries under
   * the client's api are added to the body's `tools`, after the function tools; the other apis'
   * are ignored. What they produce comes back as `server_tool` parts (Anthropic, Gemini).
   */
  providerTools?: Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>> | undefined
}

/**
 * Structured output: the answer is a JSON document valid against `schema`. Each built-in api uses
 * its native mechanism: `openai-chat` and `openrouter` `response_format` (`json_schema`),
 * `openai-responses` `text.format`, `google` `responseMimeType` with `responseJsonSchema`, and
 * `anthropic` a tool named `structured_output` whose input is the answer (its input streams back
 * as text deltas and the final message holds it as text, never as a tool call).
 */
export interface ResponseFormat {
  type: 'json_schema'
  /** The schema's name (letters, digits, `_` and `-`, at most 64), which OpenAI requires. */
  name: string
  /** JSON Schema of the answer (a TypeBox schema is one). */
  schema: Readonly<Record<string, unknown>>
  /**
   * OpenAI strict mode (`strict: true`): the model is constrained to the schema, which must then
   * close every object (`additionalProperties: false`) and require every property. Ignored by
   * the other apis.
   */
  strict?: boolean | undefined
  /** What the answer is, for the model. */
  description?: string | undefined
}

/** How hard a model should think, lowest first. */
export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high'

/**
 * How a model's reasoning is sized, for an api that has more than one way (Gemini: levels for
 * Gemini 3, a token budget for Gemini 2.5).
 */
export type ReasoningControl =
  /** The effort levels the model accepts (Gemini 3 `thinkingLevel`). */
  | { type: 'levels'; levels: readonly ReasoningEffort[] }
  /** A token budget within `min`..`max` (Gemini 2.5 `thinkingBudget`). */
  | { type: 'budget'; min: number; max: number }

/**
 * When a model refuses a `temperature` (it samples at its own): `always`, or `whileReasoning` (a
 * request with `reasoning`). Kode then leaves `temperature` out of the request.
 */
export type FixedTemperature = 'always' | 'whileReasoning'

/** What {@link StreamOptions.onRetry} is told before a retry. */
export interface RetryInfo {
  /** 1 for the first retry, 2 for the second, ... */
  attempt: number
  /** How long the transport waits before sending the request again. */
  delayMs: number
  /** Why the previous attempt failed. */
  error: ProviderError
  /**
   * What the failed attempt reported it was billed, when it reported usage before failing
   * (Anthropic's `message_start` counts the input): the attempt's message as far as it got, like
   * {@link ProviderError.partial} (`stopReason: 'error'`, `usage`, `costUsd`, `model`). Absent
   * when the attempt reported no usage. The retry's own response does not count it again.
   */
  partial?: AssistantMessage
}

/** Per-call options of {@link LLMClient.stream} and {@link LLMClient.complete}. */
export interface StreamOptions {
  /** Aborting ends the stream with a `done` whose message has `stopReason: 'aborted'`. */
  signal?: AbortSignal | undefined
  /** Called before each transport retry, so the engine can emit `error` events with canRetry: true. */
  onRetry?: ((info: RetryInfo) => void) | undefined
}

/** A model behind one wire api. */
export interface LLMClient {
  /** The wire api: `openai-chat`, `openrouter`, `anthropic`, `google`, `openai-responses`, or a registered one. */
  readonly api: string
  /** Host label stored on `AssistantMessage.provider` (defaults to `api`). */
  readonly provider: string
  readonly model: string
  /** The catalog entry of the model, if the catalog knows it. */
  readonly modelInfo: ModelInfo | undefined
  /**
   * Streams one response: deltas and tool-call start hints, then exactly one `done` carrying the
   * final message. Throws a `ProviderError` (with `.partial`) when the response fails; an abort is
   * not a failure. Breaking out of the loop cancels the HTTP request.
   */
  stream(request: LLMRequest, options?: StreamOptions): AsyncIterable<StreamItem>
  /** The same response, collected: the `done` message. */
  complete(request: LLMRequest, options?: StreamOptions): Promise<AssistantMessage>
}

/** What the catalog knows about a model. Absent fields are unknown. */
export interface ModelInfo {
  /** Prompt plus output tokens the model accepts. */
  contextWindow?: number
  /** Largest `max_tokens` the model accepts. */
  maxOutputTokens?: number
  /** USD per million tokens; `costUsd` is computed from these. */
  prices?: ModelPrices
  /** The model can reason (thinking / reasoning effort). */
  reasoning?: boolean
  /** How the model's reasoning is sized, where its api has more than one way (Gemini). */
  reasoningControl?: ReasoningControl
  /** The model accepts image input. */
  images?: boolean
  /**
   * The model takes a tool result's images inside the result (Gemini 3: `functionResponse.parts`);
   * otherwise they go beside it.
   */
  imagesInToolResults?: boolean
  /** The model refuses a `temperature`, always or while it reasons; it is then left out. */
  fixedTemperature?: FixedTemperature
}

/** How to reach a model. Only `api` and `model` are required. */
export interface ClientConfig {
  /** The wire api (see {@link LLMClient.api}). */
  api: string
  /** The model id as the provider names it. */
  model: string
  /** Sent as the api's auth header. Never printed, persisted or put into errors. */
  apiKey?: string | undefined
  /** Replaces the api root, e.g. `http://localhost:11434/v1` (`/chat/completions` is appended). */
  baseUrl?: string | undefined
  /** The fetch to use; global `fetch` by default. */
  fetch?: typeof fetch | undefined
  /** Extra request headers; they override the adapter's own (Azure: `{ 'api-key': key }`). */
  headers?: Record<string, string> | undefined
  /** Label for `AssistantMessage.provider` and error messages (`deepseek`, `azure`); default `api`. */
  provider?: string | undefined
  retry?: RetryOptions | undefined
  /**
   * A stream that sends nothing for this long while Kode waits for it fails with code `timeout`.
   * Time the consumer spends between items does not count. Default 300,000 ms; 0 disables.
   */
  idleTimeoutMs?: number | undefined
  /**
   * The longest one attempt may take, from sending the request to the last byte of the response,
   * however steadily bytes arrive (keep-alive comments forever end too). Fails with code `timeout`,
   * not retried. Default 1,800,000 ms (30 minutes); 0 disables.
   */
  responseTimeoutMs?: number | undefined
  /**
   * Follow a redirect to another origin, sending it the auth headers and the prompt. Default false:
   * such a redirect fails with code `redirect`. Redirects within the origin are always followed
   * (the same POST, at most 5).
   */
  followCrossOriginRedirects?: boolean | undefined
  /** An `undici` Dispatcher (keep-alive pool, proxy), passed to `fetch` as `init.dispatcher`. */
  dispatcher?: unknown
  /** Reads `image_file` parts. Without it, a request with an image file fails with `invalid_request`. */
  readImageFile?: ((path: string) => Promise<Uint8Array>) | undefined
  /** Extra or overriding catalog entries, by model id. */
  catalog?: Readonly<Record<string, ModelInfo>> | undefined
  /** Clock in ms since the epoch, for `createdAt` and `durationMs`. Default `Date.now`. */
  now?: (() => number) | undefined
  /** Ids of the messages produced (and of tool calls that came without one). Default `crypto.randomUUID`. */
  createId?: (() => string) | undefined
  /**
   * How thinking from another model or api is sent: as text made by this function, or dropped
   * (`false`). Default: `<thinking>\n…\n</thinking>`.
   */
  thinkingAsText?: ((text: string) => string) | false | undefined
  /**
   * What ends a response, overriding the adapter's own rule. `stop_reason` accepts a stream that
   * closes after its finish reason without the wire's terminal event, for OpenAI-compatible
   * servers that never send `data: [DONE]`. Default: the adapter's (`terminal_event` for the
   * built-in anthropic, openai-chat, openrouter and openai-responses; `stop_reason` for google).
   */
  completesOn?: Completion | undefined
  /**
   * Options of each wire api, under the api's name; each adapter reads its own entry (see
   * `ApiOptions`): `{ 'openai-chat': { includeUsage: false }, anthropic: { cacheControl: false } }`.
   */
  apiOptions?: ApiOptionsMap | undefined
  /** @deprecated Use `apiOptions['openai-chat' | 'openrouter'].includeUsage`; read when that is unset. */
  includeUsage?: boolean | undefined
  /** @deprecated Use `apiOptions['openai-chat' | 'openrouter'].maxTokensField`; read when that is unset. */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens' | undefined
  /** @deprecated Use `apiOptions['openai-chat'].reasoningField`; read when that is unset. */
  reasoningField?: string | false | undefined
  /** @deprecated Use `apiOptions.anthropic.cacheControl`; read when that is unset. */
  cacheControl?: boolean | { ttl: '5m' | '1h' } | undefined
  /** @deprecated Use `apiOptions['openai-responses'].store`; read when that is unset. */
  store?: boolean | undefined
  /** @deprecated Use `apiOptions['openai-responses'].include`; read when that is unset. */
  include?: readonly string[] | undefined
}

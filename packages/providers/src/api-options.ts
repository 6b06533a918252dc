/** Options of the Chat Completions apis (`openai-chat`, and `openrouter` where noted). */
export interface ChatApiOptions {
  /** Request `stream_options.include_usage`. Default true; turn off for servers that reject it. */
  includeUsage?: boolean | undefined
  /** The field carrying `maxOutputTokens`. Default `max_completion_tokens` (openrouter: `max_tokens`). */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens' | undefined
  /**
   * openai-chat only: the assistant-message field this model's own reasoning is sent back in
   * (DeepSeek requires `reasoning_content` in tool loops), or `false` to omit it. Default
   * `reasoning_content`.
   */
  reasoningField?: string | false | undefined
}

/** Options of the `anthropic` api. */
export interface AnthropicApiOptions {
  /** Prompt-caching breakpoints (system, tools, last user turn). Default true; `{ ttl: '1h' }` for the longer cache. */
  cacheControl?: boolean | { ttl: '5m' | '1h' } | undefined
}

/** Options of the `openai-responses` api. */
export interface ResponsesApiOptions {
  /** Let OpenAI store the response (`store`). Default false: the history is sent every turn. */
  store?: boolean | undefined
  /**
   * The `include` list. Default `['reasoning.encrypted_content']`, which lets reasoning go back
   * without `store`; `[]` sends none (for servers that reject it).
   */
  include?: readonly string[] | undefined
}

/**
 * The options of each wire api, keyed by the api's name: `ClientConfig.apiOptions` holds one entry
 * per api, and each adapter reads only its own, so one config can carry the options of every api
 * a host may switch between. A provider plugin declares the options of its api by declaration
 * merging:
 *
 * ```ts
 * declare module '@kode/providers' {
 *   interface ApiOptions {
 *     cohere: { safetyMode?: 'CONTEXTUAL' | 'STRICT' | 'OFF' }
 *   }
 * }
 * ```
 *
 * and its factory reads `config.apiOptions?.cohere`, typed.
 */
export interface ApiOptions {
  'openai-chat': ChatApiOptions
  openrouter: Omit<ChatApiOptions, 'reasoningField'>
  anthropic: AnthropicApiOptions
  'openai-responses': ResponsesApiOptions
}

/** `ClientConfig.apiOptions`: for each api, its options (see {@link ApiOptions}). */
export type ApiOptionsMap = { readonly [A in keyof ApiOptions]?: ApiOptions[A] | undefined }

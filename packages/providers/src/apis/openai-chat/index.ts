import type {
  AdapterConfig,
  Completion,
  EventMapper,
  ProviderFactory,
  WireAdapter,
} from '../../adapter/spec.js'
import type { ChatApiOptions } from '../../api-options.js'
import type { ErrorContext } from '../../transport/failures.js'
import type { LLMRequest } from '../../types.js'
import { bearerAuth } from '../shared/auth.js'
import { JsonTextCache } from '../shared/json-text-cache.js'
import { thinkingRenderer } from '../shared/thinking.js'
import { type ToolCallIdRule, toolCallIdFitter } from '../shared/tool-call-ids.js'
import { createChatEventMapper } from './events.js'
import {
  type ChatBodyOptions,
  type ChatDialect,
  type ChatMessage,
  chatBody,
  chatReasoningReplay,
  createChatMessageMapper,
} from './request.js'

/** Default root of the OpenAI API. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1'

/** What a Chat Completions dialect changes; see {@link chatAdapter}. */
export interface ChatAdapterOptions {
  defaultBaseUrl: string
  /** The host's options for this api (`config.apiOptions[api]`). */
  apiOptions: ChatApiOptions | undefined
  /** How an assistant message's reasoning goes back. */
  replayReasoning: ChatDialect['replayReasoning']
  /** The max-tokens field when the host sets none. */
  maxTokensField: ChatBodyOptions['maxTokensField']
  /** What the server accepts as a tool-call id (default: OpenAI's, at most 40 characters). */
  toolCallIds?: ToolCallIdRule | undefined
  /** The request body from the mapped messages (default {@link chatBody}). */
  body?:
    | ((request: LLMRequest, messages: ChatMessage[], options: ChatBodyOptions) => Record<string, unknown>)
    | undefined
  /** The event mapper (default {@link createChatEventMapper}). */
  events?: ((errors: ErrorContext) => EventMapper) | undefined
  /**
   * Default `terminal_event`: the stream must end with `data: [DONE]`. `stop_reason` for a server
   * that ends without it (a finish reason then completes the response).
   */
  completesOn?: Completion | undefined
}

/**
 * A Chat Completions adapter: bearer auth, POST `/chat/completions`, the shared message mapping.
 * `openai-chat` and `openrouter` are both this with different options; so can a plugin for
 * another dialect be.
 */
export function chatAdapter(config: AdapterConfig, options: ChatAdapterOptions): WireAdapter {
  const messages = createChatMessageMapper({
    speaker: { api: config.api, provider: config.provider, model: config.model },
    thinkingAsText: thinkingRenderer(config.thinkingAsText),
    replayReasoning: options.replayReasoning,
    ...(options.toolCallIds ? { toolCallId: toolCallIdFitter(options.toolCallIds) } : {}),
  })
  const bodyOptions: ChatBodyOptions = {
    model: config.model,
    includeUsage: options.apiOptions?.includeUsage ?? config.includeUsage ?? true,
    maxTokensField: options.apiOptions?.maxTokensField ?? config.maxTokensField ?? options.maxTokensField,
    fixedTemperature: config.modelInfo?.fixedTemperature,
    api: config.api,
  }
  const body = options.body ?? chatBody
  const events = options.events ?? createChatEventMapper
  const headers = bearerAuth(config.apiKey)
  const json = new JsonTextCache()
  return {
    defaultBaseUrl: options.defaultBaseUrl,
    async buildRequest(request) {
      const { system, history } = await messages(request, config.readImageFile)
      const mapped = system.concat(history.settled, history.rest)
      const built = body(request, mapped, bodyOptions)
      // The messages go as JSON text: the settled history's as one kept text, each other message's
      // kept from the request that first sent it.
      if (built.messages === mapped)
        built.messages = json.list(mapped, 0, history.known(json, 0, system.length))
      return { path: '/chat/completions', headers, body: built }
    },
    createEventMapper: () => events(config.errors),
    completesOn: options.completesOn ?? 'terminal_event',
  }
}

/**
 * `openai-chat`: Chat Completions, for OpenAI and every compatible server (vLLM, Ollama,
 * LM Studio, DeepSeek, Groq, xAI, Azure). POSTs to `${baseUrl}/chat/completions`.
 */
export const openaiChat: ProviderFactory = (config) => {
  const apiOptions = config.apiOptions?.['openai-chat']
  return chatAdapter(config, {
    defaultBaseUrl: OPENAI_BASE_URL,
    apiOptions,
    replayReasoning: chatReasoningReplay(
      apiOptions?.reasoningField ?? config.reasoningField ?? 'reasoning_content',
    ),
    maxTokensField: 'max_completion_tokens',
  })
}

import type { ProviderFactory } from '../../adapter.js'
import { bearerAuth } from '../openai-chat/index.js'
import { createChatMessageMapper } from '../openai-chat/request.js'
import { thinkingRenderer } from '../shared/thinking.js'
import { createOpenRouterEventMapper } from './events.js'
import { openrouterBody, openrouterReasoningReplay } from './request.js'

/** Default root of the OpenRouter API. */
export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1'

/**
 * `openrouter`: Chat Completions as OpenRouter speaks it, with `reasoning_details` round-trip and
 * reported cost. POSTs to `${baseUrl}/chat/completions`. Set `HTTP-Referer` / `X-Title` through
 * `headers` if you want attribution on openrouter.ai.
 */
export const openrouter: ProviderFactory = (config) => {
  const messages = createChatMessageMapper({
    speaker: { api: config.api, provider: config.provider, model: config.model },
    thinkingAsText: thinkingRenderer(config.thinkingAsText),
    replayReasoning: openrouterReasoningReplay(config.model),
  })
  const bodyOptions = {
    model: config.model,
    includeUsage: config.includeUsage ?? true,
    maxTokensField: config.maxTokensField ?? 'max_tokens',
  } as const
  return {
    defaultBaseUrl: OPENROUTER_BASE_URL,
    async buildRequest(request) {
      const body = openrouterBody(request, await messages(request, config.readImageFile), bodyOptions)
      return { path: '/chat/completions', headers: bearerAuth(config.apiKey), body }
    },
    createEventMapper: () => createOpenRouterEventMapper(config.errors),
  }
}

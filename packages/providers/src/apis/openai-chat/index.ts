import type { ProviderFactory } from '../../adapter.js'
import { thinkingRenderer } from '../shared/thinking.js'
import { createChatEventMapper } from './events.js'
import { chatBody, chatReasoningReplay, createChatMessageMapper } from './request.js'

/** Default root of the OpenAI API. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1'

/** `Authorization: Bearer <key>` when there is a key (local servers often need none). */
export function bearerAuth(apiKey: string | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {}
}

/**
 * `openai-chat`: Chat Completions, for OpenAI and every compatible server (vLLM, Ollama,
 * LM Studio, DeepSeek, Groq, xAI, Azure). POSTs to `${baseUrl}/chat/completions`.
 */
export const openaiChat: ProviderFactory = (config) => {
  const messages = createChatMessageMapper({
    speaker: { api: config.api, provider: config.provider, model: config.model },
    thinkingAsText: thinkingRenderer(config.thinkingAsText),
    replayReasoning: chatReasoningReplay(config.reasoningField ?? 'reasoning_content'),
  })
  const bodyOptions = {
    model: config.model,
    includeUsage: config.includeUsage ?? true,
    maxTokensField: config.maxTokensField ?? 'max_completion_tokens',
  } as const
  return {
    defaultBaseUrl: OPENAI_BASE_URL,
    async buildRequest(request) {
      const body = chatBody(request, await messages(request, config.readImageFile), bodyOptions)
      return { path: '/chat/completions', headers: bearerAuth(config.apiKey), body }
    },
    createEventMapper: () => createChatEventMapper(config.errors),
  }
}

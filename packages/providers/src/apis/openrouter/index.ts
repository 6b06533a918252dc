import type { ProviderFactory } from '../../adapter/spec.js'
import { chatAdapter } from '../openai-chat/index.js'
import { TOOL_CALL_ID_RULES } from '../shared/tool-call-ids.js'
import { createOpenRouterEventMapper } from './events.js'
import { openrouterBody, openrouterReasoningReplay } from './request.js'

/** Default root of the OpenRouter API. */
export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1'

/**
 * `openrouter`: Chat Completions as OpenRouter speaks it, with `reasoning_details` round-trip and
 * reported cost. POSTs to `${baseUrl}/chat/completions`. Set `HTTP-Referer` / `X-Title` through
 * `headers` if you want attribution on openrouter.ai.
 */
export const openrouter: ProviderFactory = (config) =>
  chatAdapter(config, {
    defaultBaseUrl: OPENROUTER_BASE_URL,
    apiOptions: config.apiOptions?.openrouter,
    replayReasoning: openrouterReasoningReplay(config.model),
    maxTokensField: 'max_tokens',
    toolCallIds: TOOL_CALL_ID_RULES.openrouter,
    body: openrouterBody,
    events: createOpenRouterEventMapper,
  })

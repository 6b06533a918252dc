import type { ProviderFactory } from '../../adapter/spec.js'
import { JsonTextCache } from '../shared/json-text-cache.js'
import { thinkingRenderer } from '../shared/thinking.js'
import { createAnthropicEventMapper } from './events.js'
import { STRUCTURED_OUTPUT_TOOL } from './output-tool.js'
import {
  type AnthropicMessage,
  anthropicBody,
  type CacheControl,
  createAnthropicMessageMapper,
} from './request.js'

/** Default root of the Anthropic API. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1'

/** The `anthropic-version` header Kode speaks. */
export const ANTHROPIC_VERSION = '2023-06-01'

/** `anthropic`: the Messages API. POSTs to `${baseUrl}/messages`. */
export const anthropic: ProviderFactory = (config) => {
  const messages = createAnthropicMessageMapper({
    model: config.model,
    thinkingAsText: thinkingRenderer(config.thinkingAsText),
  })
  const bodyOptions = {
    model: config.model,
    defaultMaxTokens: config.modelInfo?.maxOutputTokens ?? 4_096,
    cacheControl: cacheControlOf(config.apiOptions?.anthropic?.cacheControl ?? config.cacheControl),
    api: config.api,
  }
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION }
  if (config.apiKey) headers['x-api-key'] = config.apiKey
  const json = new JsonTextCache()
  return {
    defaultBaseUrl: ANTHROPIC_BASE_URL,
    async buildRequest(request) {
      const mapped = await messages(request, config.readImageFile)
      const turns = mapped.messages.settled.concat(mapped.messages.rest)
      const body = anthropicBody(request, { system: mapped.system, messages: turns }, bodyOptions)
      // The settled turns go as one kept text; the others are made per request (consecutive user
      // content merges, the last user turn carries the cache breakpoint) and their blocks are kept.
      const known = mapped.messages.known(json, 2, 0)
      body.messages = json.list(body.messages as AnthropicMessage[], 2, known)
      return { path: '/messages', headers, body }
    },
    createEventMapper: (request) =>
      createAnthropicEventMapper(config.errors, request?.responseFormat ? STRUCTURED_OUTPUT_TOOL : undefined),
    // Every Messages stream ends with `message_stop`; a close after `message_delta` is a cut.
    completesOn: 'terminal_event',
  }
}

function cacheControlOf(option: boolean | { ttl: '5m' | '1h' } | undefined): CacheControl | undefined {
  if (option === false) return undefined
  return typeof option === 'object' ? { type: 'ephemeral', ttl: option.ttl } : { type: 'ephemeral' }
}

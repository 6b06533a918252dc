import type { ProviderFactory } from '../../adapter/spec.js'
import type { ModelInfo } from '../../types.js'
import { OPENAI_BASE_URL } from '../openai-chat/index.js'
import { bearerAuth } from '../shared/auth.js'
import { JsonTextCache } from '../shared/json-text-cache.js'
import { thinkingRenderer } from '../shared/thinking.js'
import { createResponsesEventMapper } from './events.js'
import { createResponsesMessageMapper, type ResponsesBodyOptions, responsesBody } from './request.js'

/** What `include` asks for when the host sets nothing: reasoning that can be sent back without `store`. */
export const RESPONSES_DEFAULT_INCLUDE: readonly string[] = ['reasoning.encrypted_content']

/**
 * `include` when the host sets none: encrypted reasoning, except for a model the catalog knows and
 * does not mark as reasoning (`gpt-4o`, `gpt-4.1`), which the API answers with a 400 ("Encrypted
 * content is not supported with this model"). A model the catalog does not know is asked for it.
 */
function defaultInclude(info: ModelInfo | undefined): readonly string[] {
  return info !== undefined && info.reasoning !== true ? [] : RESPONSES_DEFAULT_INCLUDE
}

/**
 * `openai-responses`: the OpenAI Responses API, stateless (`store: false`, the history is sent
 * every turn, reasoning goes back encrypted). POSTs to `${baseUrl}/responses`.
 */
export const openaiResponses: ProviderFactory = (config) => {
  const input = createResponsesMessageMapper({
    speaker: { api: config.api, provider: config.provider, model: config.model },
    thinkingAsText: thinkingRenderer(config.thinkingAsText),
  })
  const apiOptions = config.apiOptions?.['openai-responses']
  const bodyOptions: ResponsesBodyOptions = {
    model: config.model,
    store: apiOptions?.store ?? config.store ?? false,
    include: apiOptions?.include ?? config.include ?? defaultInclude(config.modelInfo),
    fixedTemperature: config.modelInfo?.fixedTemperature,
    api: config.api,
  }
  const headers = bearerAuth(config.apiKey)
  const json = new JsonTextCache()
  return {
    defaultBaseUrl: OPENAI_BASE_URL,
    async buildRequest(request) {
      const mapped = await input(request, config.readImageFile)
      const items = mapped.input.settled.concat(mapped.input.rest)
      const body = responsesBody(request, { instructions: mapped.instructions, input: items }, bodyOptions)
      // The input goes as JSON text: the settled history's as one kept text, each other item's
      // kept from the request that first sent it.
      body.input = json.list(items, 0, mapped.input.known(json, 0, 0))
      return { path: '/responses', headers, body }
    },
    createEventMapper: () => createResponsesEventMapper(config.errors),
    completesOn: 'terminal_event',
  }
}

import type { ProviderFactory } from '../../adapter/spec.js'
import { JsonTextCache } from '../shared/json-text-cache.js'
import { thinkingRenderer } from '../shared/thinking.js'
import { createGoogleEventMapper } from './events.js'
import { createGoogleMessageMapper, googleBody } from './request.js'

/** Default root of the Gemini API. */
export const GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta'

/**
 * `google`: Gemini `streamGenerateContent` with server-sent events. POSTs to
 * `${baseUrl}/models/${model}:streamGenerateContent?alt=sse` with the key in `x-goog-api-key`
 * (`${baseUrl}/${model}:…` for a model named by its resource name, see `resourceName`).
 */
export const google: ProviderFactory = (config) => {
  const messages = createGoogleMessageMapper({
    speaker: { api: config.api, provider: config.provider, model: config.model },
    thinkingAsText: thinkingRenderer(config.thinkingAsText),
    imagesInToolResults: config.modelInfo?.imagesInToolResults === true,
  })
  const headers: Record<string, string> = config.apiKey ? { 'x-goog-api-key': config.apiKey } : {}
  const path = `/${resourceName(config.model)}:streamGenerateContent?alt=sse`
  const json = new JsonTextCache()
  return {
    defaultBaseUrl: GOOGLE_BASE_URL,
    async buildRequest(request) {
      const mapped = await messages(request, config.readImageFile)
      const contents = mapped.contents.settled.concat(mapped.contents.rest)
      const body = googleBody(
        request,
        { system: mapped.system, contents },
        config.modelInfo?.reasoningControl,
      )
      // The settled turns go as one kept text; the others are made per request (consecutive user
      // content merges) and their parts are kept.
      body.contents = json.list(contents, 2, mapped.contents.known(json, 2, 0))
      return { path, headers, body }
    },
    createEventMapper: () => createGoogleEventMapper(config.errors),
    // Gemini's stream has no terminal event: the chunk with the finish reason is the last.
    completesOn: 'stop_reason',
  }
}

/**
 * The model's resource name: a model id (`gemini-2.5-flash`) under `models/`, and a name that is
 * one already as it is (`models/gemini-2.5-flash`, as `models.list` returns it, or a tuned
 * model's `tunedModels/<id>`).
 */
function resourceName(model: string): string {
  return model.startsWith('models/') || model.startsWith('tunedModels/') ? model : `models/${model}`
}

import { registerProvider } from '@kode/providers'
import { bearerAuth, type ProviderFactory, thinkingRenderer } from '@kode/providers/adapter'
import { createCohereEventMapper } from './events.js'
import { cohereBody, createCohereMessageMapper } from './request.js'

export { cohereStopReason, cohereUsage, createCohereEventMapper } from './events.js'
export { type CohereContent, type CohereMessage, cohereBody, createCohereMessageMapper } from './request.js'

/** Options of the Cohere plugin, under `apiOptions.cohere` in the client config. */
export interface CohereOptions {
  /** Cohere's `safety_mode`; unset, Cohere's default applies. */
  safetyMode?: 'CONTEXTUAL' | 'STRICT' | 'OFF'
}

// Declares the plugin's options in the typed per-api map, so hosts get them checked:
// createClient({ api: 'cohere', model, apiOptions: { cohere: { safetyMode: 'STRICT' } } }).
declare module '@kode/providers' {
  interface ApiOptions {
    cohere: CohereOptions
  }
}

/** Default root of the Cohere API; the plugin POSTs to `${baseUrl}/chat`. */
export const COHERE_BASE_URL = 'https://api.cohere.com/v2'

/**
 * A Kode provider for Cohere's v2 chat stream: the two mappings of `request.ts` and `events.ts`
 * around the shared transport (fetch, SSE, retries, errors, abort, the final message).
 */
export const cohere: ProviderFactory = (config) => {
  const messages = createCohereMessageMapper(thinkingRenderer(config.thinkingAsText))
  const options = config.apiOptions?.cohere ?? {}
  return {
    defaultBaseUrl: COHERE_BASE_URL,
    async buildRequest(request) {
      const mapped = await messages(request, config.readImageFile)
      return {
        path: '/chat',
        headers: bearerAuth(config.apiKey),
        body: cohereBody(request, config.model, mapped, options),
      }
    },
    createEventMapper: () => createCohereEventMapper(config.errors),
    // Every stream ends with `message-end`: a stream that closes before it was cut.
    completesOn: 'terminal_event',
  }
}

/** Makes `createClient({ api: 'cohere', ... })` use this plugin. Call it once at startup. */
export function registerCohere(api = 'cohere'): void {
  registerProvider(api, cohere)
}

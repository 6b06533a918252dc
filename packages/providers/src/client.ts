import type { AssistantMessage, StreamItem } from '@kode/protocol'
import { ADAPTER_SPEC_VERSION, type Completion, type ProviderFactory } from './adapter/spec.js'
import { resolveBaseUrl } from './base-url.js'
import { lookupModel } from './catalog/lookup.js'
import { availableApis, resolveProvider } from './registry.js'
import { headerCredentials } from './transport/credentials.js'
import { messageOf, ProviderError, redact, redactCause } from './transport/errors.js'
import { secretsOf } from './transport/failures.js'
import { clientHeaders } from './transport/headers.js'
import { ResponseStream } from './transport/response-stream.js'
import { resolveRetryPolicy } from './transport/retry.js'
import type { ClientConfig, LLMClient, LLMRequest, StreamOptions } from './types.js'

const DEFAULT_IDLE_TIMEOUT_MS = 300_000
const DEFAULT_RESPONSE_TIMEOUT_MS = 1_800_000

/**
 * A client for one model behind one wire api. `api` picks the adapter (built-in or registered);
 * `baseUrl` replaces the api root. Throws a `ProviderError` with code `invalid_config` for an
 * api nobody provides, and for a `baseUrl` the default fetch cannot reach (not an http(s) URL).
 */
export function createClient(config: ClientConfig): LLMClient {
  const factory = resolveProvider(config.api)
  if (!factory) {
    throw new ProviderError(
      `unknown api ${JSON.stringify(config.api)}; available: ${availableApis().join(', ')} (or registerProvider)`,
      { code: 'invalid_config', retryable: false },
    )
  }
  return clientFor(factory, config)
}

/**
 * A client built from `factory` directly, bypassing the registry (the conformance kit tests a
 * factory this way without registering it).
 */
export function clientFor(factory: ProviderFactory, config: ClientConfig): LLMClient {
  const provider = config.provider ?? config.api
  // An unset environment variable read as the model would otherwise reach the provider as a
  // request it refuses (or, on google, a URL without a model), every time.
  if (typeof config.model !== 'string' || config.model.trim() === '') {
    throw invalidConfig(
      `${provider}: model ${JSON.stringify(config.model) ?? 'undefined'} is not a model id; pass the id the provider names the model by, such as claude-sonnet-4-5 or gpt-4.1`,
    )
  }
  const now = config.now ?? Date.now
  const createId = config.createId ?? (() => crypto.randomUUID())
  const modelInfo = lookupModel(config.api, config.model, config.catalog)
  // The key, and the credentials among the host's headers (Azure's `api-key`), never appear in errors.
  const errors = { label: provider, apiKey: config.apiKey, secrets: headerCredentials(config.headers), now }
  let adapter: ReturnType<ProviderFactory>
  try {
    adapter = factory({ ...config, provider, modelInfo, errors, createId })
  } catch (thrown) {
    // A factory's own ProviderError (an option it refuses) says what it means; anything else
    // (a crash, a string) is named as the factory's, typed, with the key kept out of it.
    if (ProviderError.is(thrown)) throw thrown
    const secrets = secretsOf(errors)
    throw new ProviderError(
      `${provider}: the provider factory failed: ${redact(messageOf(thrown), secrets)}`,
      {
        code: 'invalid_config',
        retryable: false,
        cause: redactCause(thrown, secrets),
      },
    )
  }
  // A plugin written in plain JavaScript has no types to catch these; found here, named, rather
  // than as a TypeError from inside the client.
  if (typeof adapter !== 'object' || adapter === null)
    throw invalidConfig(`${provider}: the provider factory returned no adapter`)
  if (config.baseUrl === undefined && typeof adapter.defaultBaseUrl !== 'string')
    throw invalidConfig(`${provider}: the adapter has no defaultBaseUrl; set baseUrl`)
  if (adapter.specVersion !== undefined && adapter.specVersion !== ADAPTER_SPEC_VERSION) {
    throw new ProviderError(
      `${provider}: the adapter implements spec version ${adapter.specVersion}; this Kode implements ${ADAPTER_SPEC_VERSION}`,
      { code: 'invalid_config', retryable: false },
    )
  }
  const baseUrl = resolveBaseUrl(
    config.baseUrl ?? adapter.defaultBaseUrl,
    provider,
    config.fetch !== undefined,
  )
  const completesOn = completionOf(config.completesOn ?? adapter.completesOn, provider)
  const retry = resolveRetryPolicy(config.retry)
  const message = {
    api: config.api,
    provider,
    model: config.model,
    prices: modelInfo?.prices,
    now,
    createId,
  }
  // Everything a request needs that does not depend on it, made once: the config is read here.
  const requestHeaders = clientHeaders(config.headers, errors)
  const fetch = bareFetch(config.fetch)
  const dispatcher = config.dispatcher
  const idleTimeoutMs = config.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS
  const responseTimeoutMs = config.responseTimeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS
  const followCrossOriginRedirects = config.followCrossOriginRedirects ?? false

  const stream = (request: LLMRequest, options: StreamOptions = {}): AsyncIterableIterator<StreamItem> =>
    new ResponseStream({
      adapter,
      completesOn,
      request,
      options,
      baseUrl,
      requestHeaders,
      fetch,
      dispatcher,
      retry,
      idleTimeoutMs,
      responseTimeoutMs,
      followCrossOriginRedirects,
      errors,
      message,
    })

  return {
    api: config.api,
    provider,
    model: config.model,
    modelInfo,
    stream,
    async complete(request: LLMRequest, options?: StreamOptions): Promise<AssistantMessage> {
      for await (const item of stream(request, options)) if (item.type === 'done') return item.message
      // The stream always ends with `done` or throws; this guards a broken custom adapter.
      throw new ProviderError(`${provider}: the stream ended without a final message`, {
        code: 'stream_cut',
        retryable: false,
      })
    },
  }
}

/** The configured or adapter's `completesOn`; a value no version of Kode knows is a config error, found early. */
function completionOf(value: Completion | undefined, provider: string): Completion {
  if (value === undefined || value === 'stop_reason' || value === 'terminal_event')
    return value ?? 'stop_reason'
  throw new ProviderError(`${provider}: completesOn is ${JSON.stringify(value)}`, {
    code: 'invalid_config',
    retryable: false,
  })
}

/**
 * The fetch the transport calls, always called bare: a browser's fetch throws "Illegal
 * invocation" when called as a method of another object, so a host's `fetch: window.fetch` and
 * the global default both go through a plain function. The global one is looked up per call, so
 * a fetch a host installs later is the one used.
 */
function bareFetch(host: typeof fetch | undefined): typeof fetch {
  return host ? (input, init) => host(input, init) : (input, init) => globalThis.fetch(input, init)
}

function invalidConfig(message: string): ProviderError {
  return new ProviderError(message, { code: 'invalid_config', retryable: false })
}

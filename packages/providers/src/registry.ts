import type { ProviderFactory } from './adapter/spec.js'
import { anthropic } from './apis/anthropic/index.js'
import { google } from './apis/google/index.js'
import { openaiChat } from './apis/openai-chat/index.js'
import { openaiResponses } from './apis/openai-responses/index.js'
import { openrouter } from './apis/openrouter/index.js'

/** Built-in apis; looked up, never registered, so importing the package changes nothing. */
const BUILTIN: Readonly<Record<string, ProviderFactory>> = {
  'openai-chat': openaiChat,
  openrouter,
  anthropic,
  google,
  'openai-responses': openaiResponses,
}

// The one piece of process state the package allows: apis the host registered. It hangs off
// `globalThis` under a `Symbol.for` key, so every copy of this package in the process (the ESM and
// the CommonJS build, or two installs) shares one registry, as the error markers do.
const REGISTRY = Symbol.for('kode.providerRegistry')

function registered(): Map<string, ProviderFactory> {
  const holder = globalThis as { [REGISTRY]?: Map<string, ProviderFactory> }
  holder[REGISTRY] ??= new Map()
  return holder[REGISTRY]
}

/**
 * Makes `createClient({ api })` use `factory` for `api`. Registering a built-in name replaces the
 * built-in adapter for this process. The registry is one per process: a provider registered
 * through the CommonJS build is seen by the ESM build and the other way round. See
 * docs/writing-a-provider.md.
 */
export function registerProvider(api: string, factory: ProviderFactory): void {
  if (typeof api !== 'string' || api === '')
    throw new TypeError('registerProvider: api must be a non-empty string')
  if (typeof factory !== 'function')
    throw new TypeError(`registerProvider(${api}): factory must be a function`)
  registered().set(api, factory)
}

/** The factory for `api`: the registered one, else the built-in one. */
export function resolveProvider(api: string): ProviderFactory | undefined {
  return registered().get(api) ?? (Object.hasOwn(BUILTIN, api) ? BUILTIN[api] : undefined)
}

/** Every api `createClient` accepts now: built-in and registered. */
export function availableApis(): string[] {
  return [...new Set([...Object.keys(BUILTIN), ...registered().keys()])]
}

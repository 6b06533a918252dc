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

// The one piece of module state the package allows: apis the host registered.
const registered = new Map<string, ProviderFactory>()

/**
 * Makes `createClient({ api })` use `factory` for `api`. Registering a built-in name replaces the
 * built-in adapter for this process. See docs/writing-a-provider.md.
 */
export function registerProvider(api: string, factory: ProviderFactory): void {
  if (typeof api !== 'string' || api === '')
    throw new TypeError('registerProvider: api must be a non-empty string')
  if (typeof factory !== 'function')
    throw new TypeError(`registerProvider(${api}): factory must be a function`)
  registered.set(api, factory)
}

/** The factory for `api`: the registered one, else the built-in one. */
export function resolveProvider(api: string): ProviderFactory | undefined {
  return registered.get(api) ?? (Object.hasOwn(BUILTIN, api) ? BUILTIN[api] : undefined)
}

/** Every api `createClient` accepts now: built-in and registered. */
export function availableApis(): string[] {
  return [...new Set([...Object.keys(BUILTIN), ...registered.keys()])]
}

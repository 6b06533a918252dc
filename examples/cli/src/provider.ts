import type { ModelSettings } from '@kode/core'
import { availableApis, createClient, type LLMClient } from '@kode/providers'
import { SCRIPTED_MODEL_INFO, type ScriptedModel, startScriptedModel } from './scripted/server.js'

/** The environment variable each built-in api's key is read from. */
export const API_KEY_ENV: Readonly<Record<string, string>> = {
  anthropic: 'ANTHROPIC_API_KEY',
  'openai-responses': 'OPENAI_API_KEY',
  'openai-chat': 'OPENAI_API_KEY',
  google: 'GEMINI_API_KEY',
  openrouter: 'OPENROUTER_API_KEY',
}

/** The model used for an api when none is given. */
export const DEFAULT_MODEL: Readonly<Record<string, string>> = {
  anthropic: 'claude-sonnet-4-5',
  'openai-responses': 'gpt-5-mini',
  'openai-chat': 'gpt-4.1-mini',
  google: 'gemini-2.5-flash',
  openrouter: 'anthropic/claude-sonnet-4.5',
}

// Which api to use when none is configured: the first whose key is set.
const PREFERENCE = ['anthropic', 'openai-responses', 'google', 'openrouter']

/** How to reach a model: what the user chose, and the environment. */
export interface ProviderChoice {
  api?: string
  model?: string
  baseUrl?: string
  apiKeyEnv?: string
  reasoning?: 'minimal' | 'low' | 'medium' | 'high'
  /** Use the scripted offline model whatever keys are set. */
  scripted?: boolean
}

/** Why the CLI talks to the scripted model: `--scripted`, or no model chosen and no key set. */
export interface Offline {
  reason: 'scripted-flag' | 'no-key'
  /** Says why, for the notices: `--scripted was given`, `no API key is set`. */
  why: string
}

/** What to do to talk to a real model instead, e.g. `drop --scripted`. */
export function realModelHint(offline: Offline): string {
  switch (offline.reason) {
    case 'scripted-flag':
      return 'drop --scripted'
    case 'no-key':
      return 'set ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY or OPENROUTER_API_KEY, or pass --api openai-chat --base-url for a local server (Ollama, vLLM)'
    default: {
      const unknown: never = offline.reason
      return unknown
    }
  }
}

/**
 * The choice `/model` switches to: `next` over `current`. Moving to another api drops the current
 * `baseUrl` and `apiKeyEnv`: they belong to the old api's server, and kept they would send its key
 * to the new api's host (a DeepSeek key to api.anthropic.com). `currentApi` is the api in use
 * (none for the scripted model).
 */
export function switchChoice(
  current: ProviderChoice,
  currentApi: string | undefined,
  next: ProviderChoice,
): ProviderChoice {
  const { baseUrl: _baseUrl, apiKeyEnv: _apiKeyEnv, ...apiNeutral } = current
  const sameApi = next.api === undefined || next.api === currentApi
  return { ...(sameApi ? current : apiNeutral), ...next, scripted: false }
}

/** The model the CLI talks to. */
export type ResolvedProvider =
  | { kind: 'real'; api: string; model: string; baseUrl?: string; apiKey?: string; keyEnv: string }
  /** The local scripted model, and why. */
  | ({ kind: 'scripted' } & Offline)

/** A wrong provider choice: an unknown api, or a model given without an api the CLI can pick. */
export class ProviderChoiceError extends Error {
  override readonly name: string = 'ProviderChoiceError'
}

/** A model was chosen (`--api`, `--model`, a config file) but the variable holding its key is not set. */
export class MissingKeyError extends ProviderChoiceError {
  override readonly name = 'MissingKeyError'
  /** The environment variable that is not set, e.g. `GEMINI_API_KEY`. */
  readonly keyEnv: string
  /** The model that needs it, e.g. `google gemini-2.5-pro`. */
  readonly chosen: string

  /** `remedy` follows "set <keyEnv>": what else to do, where the choice was made. */
  constructor(
    keyEnv: string,
    chosen: string,
    remedy = ', or pass --scripted to run offline with the scripted model',
  ) {
    super(`${keyEnv} is not set, and ${chosen} needs it: set ${keyEnv}${remedy}`)
    this.keyEnv = keyEnv
    this.chosen = chosen
  }
}

/**
 * Decides which model to talk to. A model chosen explicitly (an api, a model or a key variable,
 * from flags or a config file) without its key is refused with {@link MissingKeyError}: silently
 * answering from a script instead would look like the real model misbehaving. With nothing
 * chosen and no key set, it falls back to the scripted model and says why. A `baseUrl` without
 * a key is taken as a local server that needs none.
 */
export function resolveProvider(choice: ProviderChoice, env: NodeJS.ProcessEnv): ResolvedProvider {
  if (choice.scripted) return { kind: 'scripted', reason: 'scripted-flag', why: '--scripted was given' }
  const apis = availableApis()
  const keyEnvOf = (api: string) => choice.apiKeyEnv ?? API_KEY_ENV[api] ?? `${api.toUpperCase()}_API_KEY`
  // A variable set to blanks (`KEY=' '`, an empty line in an env file) holds no key.
  const keyIn = (name: string) => (env[name]?.trim() ? env[name] : undefined)
  const api =
    choice.api ??
    PREFERENCE.find((candidate) => apis.includes(candidate) && keyIn(keyEnvOf(candidate))) ??
    'anthropic'
  if (!apis.includes(api)) {
    throw new ProviderChoiceError(`unknown api "${api}"; available: ${apis.join(', ')}`)
  }
  const keyEnv = keyEnvOf(api)
  const apiKey = keyIn(keyEnv)
  const model = choice.model ?? DEFAULT_MODEL[api]
  if (!apiKey && !choice.baseUrl) {
    const chosen = choice.api !== undefined || choice.model !== undefined || choice.apiKeyEnv !== undefined
    if (chosen) throw new MissingKeyError(keyEnv, model ? `${api} ${model}` : api)
    return { kind: 'scripted', reason: 'no-key', why: 'no API key is set' }
  }
  if (!model) throw new ProviderChoiceError(`no default model for api "${api}": pass --model`)
  const resolved: ResolvedProvider = { kind: 'real', api, model, keyEnv }
  if (choice.baseUrl) resolved.baseUrl = choice.baseUrl
  if (apiKey) resolved.apiKey = apiKey
  return resolved
}

/** A client for the chosen model, and what to close when done (the scripted server). */
export interface ConnectedModel {
  client: LLMClient
  /** How every run asks this model to answer (`--reasoning`, or the config's `reasoning`). */
  modelSettings: ModelSettings
  /** A line describing the model for the banner, e.g. `anthropic claude-sonnet-4-5`. */
  label: string
  /** Set when this is the local scripted model: why. */
  offline?: Offline
  close(): Promise<void>
}

/** Connects to the resolved model: a client for a real api, or a started scripted model. */
export async function connectModel(
  resolved: ResolvedProvider,
  options: { reasoning?: ProviderChoice['reasoning']; chunkDelayMs?: number } = {},
): Promise<ConnectedModel> {
  if (resolved.kind === 'scripted') {
    const server: ScriptedModel = await startScriptedModel({ chunkDelayMs: options.chunkDelayMs })
    const client = createClient({
      api: server.api,
      model: server.model,
      baseUrl: server.url,
      provider: 'scripted',
      catalog: { [server.model]: SCRIPTED_MODEL_INFO },
    })
    return {
      client,
      modelSettings: {},
      label: `scripted ${server.model} (offline)`,
      offline: { reason: resolved.reason, why: resolved.why },
      close: () => server.close(),
    }
  }
  const client = createClient({
    api: resolved.api,
    model: resolved.model,
    ...(resolved.apiKey !== undefined ? { apiKey: resolved.apiKey } : {}),
    ...(resolved.baseUrl !== undefined ? { baseUrl: resolved.baseUrl } : {}),
  })
  const modelSettings: ModelSettings = options.reasoning ? { reasoning: { effort: options.reasoning } } : {}
  return { client, modelSettings, label: `${resolved.api} ${resolved.model}`, close: async () => {} }
}

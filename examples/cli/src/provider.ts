import { availableApis, createClient, type LLMClient, type LLMRequest } from '@kode/providers'
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

/** The model the CLI talks to. */
export type ResolvedProvider =
  | { kind: 'real'; api: string; model: string; baseUrl?: string; apiKey?: string; keyEnv: string }
  /** No key (or `--scripted`): the local scripted model. `why` says which, for the notice. */
  | { kind: 'scripted'; why: string }

/** A wrong provider choice: an unknown api, or a model given without an api the CLI can pick. */
export class ProviderChoiceError extends Error {
  override readonly name = 'ProviderChoiceError'
}

/**
 * Decides which model to talk to. An api without a key (and without a `baseUrl`, which may be a
 * local server that needs none) falls back to the scripted model, and says why.
 */
export function resolveProvider(choice: ProviderChoice, env: NodeJS.ProcessEnv): ResolvedProvider {
  if (choice.scripted) return { kind: 'scripted', why: '--scripted was given' }
  const apis = availableApis()
  const keyEnvOf = (api: string) => choice.apiKeyEnv ?? API_KEY_ENV[api] ?? `${api.toUpperCase()}_API_KEY`
  const api =
    choice.api ??
    PREFERENCE.find((candidate) => apis.includes(candidate) && env[keyEnvOf(candidate)]) ??
    'anthropic'
  if (!apis.includes(api)) {
    throw new ProviderChoiceError(`unknown api "${api}"; available: ${apis.join(', ')}`)
  }
  const keyEnv = keyEnvOf(api)
  const apiKey = env[keyEnv] || undefined
  if (!apiKey && !choice.baseUrl) return { kind: 'scripted', why: `${keyEnv} is not set` }
  const model = choice.model ?? DEFAULT_MODEL[api]
  if (!model) throw new ProviderChoiceError(`no default model for api "${api}": pass --model`)
  const resolved: ResolvedProvider = { kind: 'real', api, model, keyEnv }
  if (choice.baseUrl) resolved.baseUrl = choice.baseUrl
  if (apiKey) resolved.apiKey = apiKey
  return resolved
}

/** A client for the chosen model, and what to close when done (the scripted server). */
export interface ConnectedModel {
  client: LLMClient
  /** A line describing the model for the banner, e.g. `anthropic claude-sonnet-4-5`. */
  label: string
  scripted: boolean
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
      label: `scripted ${server.model} (offline)`,
      scripted: true,
      close: () => server.close(),
    }
  }
  const base = createClient({
    api: resolved.api,
    model: resolved.model,
    ...(resolved.apiKey !== undefined ? { apiKey: resolved.apiKey } : {}),
    ...(resolved.baseUrl !== undefined ? { baseUrl: resolved.baseUrl } : {}),
  })
  const client = options.reasoning ? withReasoning(base, options.reasoning) : base
  return { client, label: `${resolved.api} ${resolved.model}`, scripted: false, close: async () => {} }
}

/**
 * A client that asks for reasoning on every request. The agent builds requests itself, so the
 * CLI adds `reasoning` here, at the client, through the public `LLMClient` interface.
 */
export function withReasoning(
  client: LLMClient,
  effort: NonNullable<LLMRequest['reasoning']>['effort'],
): LLMClient {
  const add = (request: LLMRequest): LLMRequest => ({
    ...request,
    reasoning: { ...request.reasoning, effort },
  })
  return {
    get api() {
      return client.api
    },
    get provider() {
      return client.provider
    },
    get model() {
      return client.model
    },
    get modelInfo() {
      return client.modelInfo
    },
    stream: (request, options) => client.stream(add(request), options),
    complete: (request, options) => client.complete(add(request), options),
  }
}

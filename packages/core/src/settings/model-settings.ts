import type { LLMRequest, ReasoningEffort } from '@kode/providers'
import { AgentError } from '../errors.js'

/**
 * How the model is asked to answer, per agent (`createAgent({ modelSettings })`) and per run
 * (`run(input, { modelSettings })`, which overrides the agent's field by field). Every field
 * reaches the request body of every built-in api; an unset field leaves the provider's default.
 */
export interface ModelSettings {
  /** Upper bound of generated tokens per response (reasoning included where the provider counts it so). */
  maxOutputTokens?: number | undefined
  /** Sampling temperature (0 and up). Anthropic ignores it while extended thinking is on. */
  temperature?: number | undefined
  /**
   * Ask for reasoning: an effort level, or a token budget. Apis that size reasoning the other
   * way convert (see docs/providers.md).
   */
  reasoning?: { effort: ReasoningEffort } | { budgetTokens: number } | undefined
  /**
   * Whether the model must, may or must not call tools, or which one it must call. Sub-agents do
   * not inherit it: it names the parent's tools, and a child forced to call tools never answers.
   */
  toolChoice?: 'auto' | 'none' | 'required' | { name: string } | undefined
  /**
   * Provider-specific request-body fields keyed by api (`{ anthropic: { top_k: 40 } }`): set on
   * the body's top level for a client of that api, ignored by the others. A run's entry for an
   * api replaces the agent's entry for it.
   */
  providerOptions?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
  /**
   * Tools the provider runs itself, keyed by api, each as that api's `tools` array takes it
   * (`{ anthropic: [{ type: 'web_search_20250305', name: 'web_search' }], google: [{ codeExecution:
   * {} }] }`): declared after the agent's tools for a client of that api, ignored by the others.
   * A run's entry for an api replaces the agent's entry for it.
   */
  providerTools?: Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>> | undefined
}

/** `override`'s fields over `base`'s, field by field (providerOptions and providerTools api by api). */
export function mergeModelSettings(
  base: ModelSettings | undefined,
  override: ModelSettings | undefined,
): ModelSettings {
  if (!override) return { ...base }
  if (!base) return { ...override }
  const merged: ModelSettings = { ...base }
  for (const [key, value] of Object.entries(override)) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value
  }
  if (base.providerOptions && override.providerOptions) {
    merged.providerOptions = { ...base.providerOptions, ...override.providerOptions }
  }
  if (base.providerTools && override.providerTools) {
    merged.providerTools = { ...base.providerTools, ...override.providerTools }
  }
  return merged
}

/** What a sub-agent inherits from its parent's settings: everything but `toolChoice`. */
export function inheritedModelSettings(parent: ModelSettings): ModelSettings {
  const { toolChoice: _toolChoice, ...rest } = parent
  return rest
}

/** Checks settings before anything runs; throws `AgentError` (`invalid_options`) naming the field. */
export function checkModelSettings(settings: ModelSettings | undefined, where = 'modelSettings'): void {
  // `null` is none, as for the options beside it.
  if (settings === undefined || settings === null) return
  // Hosts in plain JavaScript pass anything: each odd value is refused by name, never a TypeError.
  if (typeof settings !== 'object' || Array.isArray(settings)) {
    throw new AgentError('invalid_options', `${where} must be an object of settings`)
  }
  const { maxOutputTokens, temperature, reasoning, toolChoice, providerOptions, providerTools } = settings
  const fail = (message: string): never => {
    throw new AgentError('invalid_options', `${where}.${message}`)
  }
  if (maxOutputTokens !== undefined && !(Number.isInteger(maxOutputTokens) && maxOutputTokens > 0))
    fail(`maxOutputTokens must be a positive integer (got ${maxOutputTokens})`)
  if (temperature !== undefined && !(Number.isFinite(temperature) && temperature >= 0))
    fail(`temperature must be a number of 0 or more (got ${temperature})`)
  if (reasoning !== undefined) {
    if (typeof reasoning !== 'object' || reasoning === null) {
      fail('reasoning needs an effort (minimal, low, medium, high) or a budgetTokens')
    } else if ('budgetTokens' in reasoning) {
      const budget = reasoning.budgetTokens
      if (!(Number.isInteger(budget) && budget > 0))
        fail(`reasoning.budgetTokens must be a positive integer (got ${budget})`)
    } else if (!['minimal', 'low', 'medium', 'high'].includes((reasoning as { effort: string }).effort)) {
      fail(`reasoning needs an effort (minimal, low, medium, high) or a budgetTokens`)
    }
  }
  if (toolChoice !== undefined && typeof toolChoice !== 'string') {
    if (typeof toolChoice?.name !== 'string') fail('toolChoice must be auto, none, required or { name }')
  } else if (toolChoice !== undefined && !['auto', 'none', 'required'].includes(toolChoice)) {
    fail(`toolChoice must be auto, none, required or { name } (got ${JSON.stringify(toolChoice)})`)
  }
  if (providerOptions !== undefined) {
    if (typeof providerOptions !== 'object' || providerOptions === null || Array.isArray(providerOptions))
      fail('providerOptions must be an object of request-body fields by api')
    for (const [api, fields] of Object.entries(providerOptions)) {
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
        fail(`providerOptions.${api} must be an object of request-body fields`)
    }
  }
  if (providerTools !== undefined) {
    if (typeof providerTools !== 'object' || providerTools === null || Array.isArray(providerTools))
      fail('providerTools must be an object of tool lists by api')
    for (const [api, tools] of Object.entries(providerTools)) {
      if (
        !Array.isArray(tools) ||
        !tools.every((tool) => typeof tool === 'object' && tool !== null && !Array.isArray(tool))
      )
        fail(`providerTools.${api} must list each tool as an object, as the api takes it`)
    }
  }
}

/** Most tool names a refused `toolChoice` lists. */
const MAX_LISTED_TOOLS = 20

/**
 * Refuses a `toolChoice` that names a tool the model is not offered (`offered`: the names of the
 * tools the request declares natively; none with a text strategy): every api refuses such a request,
 * and the engine can say why before anything is sent. Throws `AgentError` (`invalid_options`).
 */
export function checkToolChoice(
  settings: ModelSettings,
  offered: readonly string[],
  where = 'modelSettings',
): void {
  const choice = settings.toolChoice
  if (choice === undefined || typeof choice === 'string' || offered.includes(choice.name)) return
  const listed = offered.slice(0, MAX_LISTED_TOOLS).join(', ')
  const names = offered.length === 0 ? 'none' : offered.length > MAX_LISTED_TOOLS ? `${listed}, …` : listed
  throw new AgentError(
    'invalid_options',
    `${where}.toolChoice names ${choice.name}, which is not a tool the model is offered (${names})`,
  )
}

/** The request with the settings' fields set. */
export function withModelSettings(request: LLMRequest, settings: ModelSettings): LLMRequest {
  const out: LLMRequest = { ...request }
  if (settings.maxOutputTokens !== undefined) out.maxOutputTokens = settings.maxOutputTokens
  if (settings.temperature !== undefined) out.temperature = settings.temperature
  if (settings.reasoning !== undefined) out.reasoning = { ...settings.reasoning }
  if (settings.toolChoice !== undefined) out.toolChoice = settings.toolChoice
  if (settings.providerOptions !== undefined) out.providerOptions = settings.providerOptions
  if (settings.providerTools !== undefined) out.providerTools = settings.providerTools
  return out
}

import type { LLMRequest } from '@kode/providers'
import { AgentError } from '../errors.js'
import type { AgentHooks } from '../hooks/hooks.js'
import { checkModelSettings } from '../settings/model-settings.js'
import { thrownText } from '../thrown-text.js'
import type { AbortListeners } from './abort-listeners.js'

/** What running `beforeModelCall` needs of the task (the task runtime is one). */
export interface ModelHookScope {
  readonly hooks: AgentHooks
  readonly sessionId: string
  readonly signal: AbortSignal
  readonly aborts: AbortListeners
  /** Fails the task because the host failed: the hook threw. */
  failHost(error: unknown, message: string): void
}

/**
 * `request` after the host's `beforeModelCall`: every request the engine sends goes through it, a
 * turn's and a compaction's summary request alike, so a hook that redacts, routes or refuses
 * requests sees them all. `undefined` when the hook threw (the task fails, `failHost`) or the task
 * was interrupted meanwhile: nothing is to be sent then.
 */
export async function hookedRequest(
  rt: ModelHookScope,
  request: LLMRequest,
): Promise<LLMRequest | undefined> {
  const hook = rt.hooks.beforeModelCall
  if (!hook) return request
  try {
    // Interrupted while the hook ran: `undefined`, and the call reads as aborted.
    const hooked = await rt.aborts.unlessAborted(
      hook(request, { sessionId: rt.sessionId, signal: rt.signal }),
    )
    if (rt.signal.aborted) return undefined
    if (hooked === undefined || hooked === null) return request
    // Checked here, where the host can be told what its hook did: sent on, a request without a
    // messages list failed in the provider as "could not build the request".
    if (typeof hooked !== 'object' || !Array.isArray((hooked as { messages?: unknown }).messages)) {
      throw new TypeError(
        `beforeModelCall must return a request (with a messages list) or nothing; it returned ${describe(hooked)}`,
      )
    }
    checkSettings(hooked as LLMRequest)
    return hooked
  } catch (error) {
    // Interrupted meanwhile, the call reads as aborted: a hook that stops when its signal aborts
    // (rejecting with the abort, as `fetch` does) did what it was asked to.
    if (!rt.signal.aborted) rt.failHost(error, `The beforeModelCall hook threw: ${thrownText(error)}`)
    return undefined
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object without a messages list'
  return `a ${typeof value}`
}

/**
 * The hook's request gets the checks the agent's and the run's settings got before anything ran:
 * sent on, a NaN temperature went out as `null` (the provider's default) and a negative token
 * limit or an unknown tool choice as they were, each the hook's bug read as the provider's answer.
 */
function checkSettings(request: LLMRequest): void {
  const { maxOutputTokens, temperature, reasoning, toolChoice, providerOptions, providerTools } = request
  // A request may name an effort and a budget, or neither (the provider's default effort).
  const sized =
    reasoning?.budgetTokens !== undefined
      ? { budgetTokens: reasoning.budgetTokens }
      : reasoning?.effort !== undefined
        ? { effort: reasoning.effort }
        : undefined
  try {
    checkModelSettings(
      { maxOutputTokens, temperature, reasoning: sized, toolChoice, providerOptions, providerTools },
      'request',
    )
  } catch (error) {
    if (!AgentError.is(error)) throw error
    throw new TypeError(
      `beforeModelCall returned a request whose ${error.message.slice('request.'.length)}`,
      {
        cause: error,
      },
    )
  }
}

import { type AssistantMessage, addUsage, type Usage } from '@kode/protocol'

/** What a response was billed, as a record that keeps it carries it (see {@link billedBy}). */
export interface Billed {
  usage?: Usage
  costUsd?: number
  model?: string
}

/**
 * The usage, cost and model of `message`, each when it has one: what a record keeps of a response
 * it does not hold itself (a summary not saved, a call that left no message, a retried attempt),
 * so that the task's records add up to what its accounting counted.
 */
export function billedBy(message: AssistantMessage): Billed {
  const billed: Billed = {}
  if (message.usage) billed.usage = message.usage
  if (message.costUsd !== undefined) billed.costUsd = message.costUsd
  if (message.model !== undefined) billed.model = message.model
  return billed
}

/**
 * `earlier` and `later` together, as one record keeps what several attempts of one request were
 * billed: usage and cost summed, the model the later one names, else the earlier's.
 */
export function addBilled(earlier: Billed, later: Billed): Billed {
  const billed: Billed = { ...earlier, ...later }
  if (earlier.usage && later.usage) billed.usage = addUsage(earlier.usage, later.usage)
  if (earlier.costUsd !== undefined && later.costUsd !== undefined)
    billed.costUsd = earlier.costUsd + later.costUsd
  return billed
}

import type { Message } from '@kode/protocol'
import { ProviderError } from '../../transport/errors.js'

/** The roles a request's message may have. */
const ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant', 'tool'])

/**
 * Checks that `messages[from..]` are messages a request can send, and fails with a non-retryable
 * `invalid_request` naming the first that is not (its index and what is wrong), before anything
 * is sent. A request's messages come from the host (a `beforeModelCall` hook may rewrite them),
 * and the conversion would drop a message of an unknown role without a word: the model would
 * answer a conversation the host never meant. Only the shape the conversion relies on is checked
 * (an object with a known `role`, a `parts` list of typed parts, a tool result's id and text), so
 * the cost is a few property reads per message. With `checked`, the messages found good are kept
 * there and not checked again (`MessagePreparer` checks each message object once).
 */
export function checkMessages(messages: readonly Message[], from = 0, checked?: WeakSet<Message>): void {
  for (let i = from; i < messages.length; i++) {
    const message = messages[i]!
    if (checked?.has(message)) continue
    const problem = messageProblem(message)
    if (problem !== undefined) {
      throw new ProviderError(`request message ${i} ${problem}`, {
        code: 'invalid_request',
        retryable: false,
      })
    }
    checked?.add(message)
  }
}

/** What makes `value` no message a request can send, or `undefined` when it is one. */
function messageProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `is not a message object (${describe(value)})`
  }
  const message = value as { role?: unknown; parts?: unknown; toolCallId?: unknown; outputText?: unknown }
  const { role } = message
  if (typeof role !== 'string' || !ROLES.has(role)) {
    return role === undefined
      ? 'has no role (a message has role system, developer, user, assistant or tool)'
      : `has an unknown role ${describe(role)} (known: system, developer, user, assistant, tool)`
  }
  if (!Array.isArray(message.parts))
    return `(${role}) has no parts list (parts is ${describe(message.parts)})`
  const at = message.parts.findIndex(
    (part: unknown) =>
      typeof part !== 'object' || part === null || typeof (part as { type?: unknown }).type !== 'string',
  )
  if (at !== -1) return `(${role}) has a part ${at} that is not a typed part (${describe(message.parts[at])})`
  if (role === 'tool') {
    if (typeof message.toolCallId !== 'string') return '(tool) has no toolCallId string'
    if (typeof message.outputText !== 'string') return '(tool) has no outputText string'
  }
  return undefined
}

/** A short, safe account of a value: its JSON when short (strings, numbers), else its kind. */
function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'string') return value.length <= 40 ? JSON.stringify(value) : 'a long string'
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined) return String(value)
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

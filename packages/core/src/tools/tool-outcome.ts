import {
  CodecError,
  roundTripHistoryEvent,
  type ToolCallPart,
  type ToolResultMessage,
  validateHistoryEvent,
} from '@kode/protocol'
import { recordBytesOver } from '@kode/session'
import { capOutput } from './output-limit.js'

/** A tool call's result before it is stamped with ids: what the model and the host will see. */
export type ToolOutcome = Omit<ToolResultMessage, 'role' | 'id' | 'createdAt' | 'toolCallId' | 'toolName'>

/** The text an interrupted call's `aborted` result carries, for the model to read next time. */
export const INTERRUPTED_RUNNING_TEXT = 'The user interrupted this tool call before it finished.'
/** The same, for a call that had not started when the user interrupted. */
export const INTERRUPTED_PENDING_TEXT = 'The user interrupted the task before this tool call ran.'

export function errorOutcome(outputText: string): ToolOutcome {
  return { status: 'error', outputText, parts: [] }
}

/**
 * Where a call was when the task stopped: not run yet (`beforeToolCall` included), running, or
 * finished (the tool returned and its sub-agents ended) while `afterToolCall` still had its result.
 */
export type CallStage = 'pending' | 'running' | 'finished'

/** A call the task stopped because the host failed (not the user): an `error`, never `aborted`. */
export function hostFailureOutcome(stage: CallStage, message: string): ToolOutcome {
  return errorOutcome(`The task failed ${HOST_FAILURE_WHEN[stage]}: ${message}`)
}

const HOST_FAILURE_WHEN: Record<CallStage, string> = {
  pending: 'before this tool call ran',
  running: 'before this tool call finished',
  // The tool did its work; what it returned is replaced by this failure.
  finished: 'after this tool call finished (its result was not kept)',
}

/**
 * The same, for a call whose tool had finished while `afterToolCall` still had its result: the
 * tool's work is done (a file written), which the model must not take for undone.
 */
export const INTERRUPTED_FINISHED_TEXT =
  'The user interrupted the task after this tool call finished; its result was not kept.'

/** The `aborted` result of a call the user interrupted: before it ran, while it ran, or after (`finished`). */
export function abortedOutcome(started: boolean, finished = false): ToolOutcome {
  const outputText = finished
    ? INTERRUPTED_FINISHED_TEXT
    : started
      ? INTERRUPTED_RUNNING_TEXT
      : INTERRUPTED_PENDING_TEXT
  return { status: 'aborted', outputText, parts: [] }
}

/**
 * Reads what `execute` returned: text, a `ToolOutput`, or nothing (empty text). Anything else is
 * a bug in the tool, reported to the model as an `error` result rather than thrown.
 */
export function outcomeOf(value: unknown, toolName: string): ToolOutcome {
  try {
    return readOutcome(value, toolName)
  } catch {
    // A getter of the returned object threw.
    return errorOutcome(`Tool "${toolName}" returned an object that could not be read.`)
  }
}

/**
 * Reads a value returned as a tool's result (as `outcomeOf`, but a getter that throws is thrown
 * on): text, a `ToolOutput`, or nothing; any other shape is an `error` outcome naming the tool.
 */
export function readOutcome(value: unknown, toolName: string): ToolOutcome {
  if (value === undefined || value === null) return { status: 'success', outputText: '', parts: [] }
  if (typeof value === 'string') return { status: 'success', outputText: value, parts: [] }
  const refused = () =>
    errorOutcome(
      `Tool "${toolName}" returned ${describe(value)}; a tool returns a string or an object with outputText.`,
    )
  if (typeof value !== 'object') return refused()
  // Each field is read once: a getter may answer differently the second time (text, then a number).
  const { outputText, status, parts, uiExtra, sideEffects, taskMetadata } = value as Record<string, unknown>
  if (typeof outputText !== 'string') return refused()
  const outcome: ToolOutcome = {
    status: status === 'error' ? 'error' : 'success',
    outputText,
    parts: Array.isArray(parts) ? [...parts] : [],
  }
  if (uiExtra !== undefined) outcome.uiExtra = uiExtra as ToolOutcome['uiExtra']
  if (Array.isArray(sideEffects)) outcome.sideEffects = [...sideEffects]
  if (taskMetadata !== undefined) outcome.taskMetadata = taskMetadata as ToolOutcome['taskMetadata']
  return outcome
}

/**
 * Stamps an outcome into the persisted result message; its text is capped at `outputLimit`, and
 * each lone surrogate in it (half of an emoji, left by a tool that cut a string) becomes U+FFFD,
 * as a UTF-8 encoder would make it. Such text has no UTF-8 form, and strict JSON parsers refuse a
 * request carrying its `\ud83d` escape: kept in the history, it would fail every later request of
 * the session. A result larger than `maxRecordBytes` (the store's limit, if any) becomes an
 * `error` result saying so.
 */
export function resultMessage(
  call: ToolCallPart,
  outcome: ToolOutcome,
  outputLimit: number,
  stamp: { id: string; createdAt: number },
  maxRecordBytes?: number,
): ToolResultMessage {
  const message = keptMessage(call, outcome, outputLimit, stamp)
  const bytes = maxRecordBytes === undefined ? 0 : oversize(message, maxRecordBytes)
  if (bytes === 0) return message
  // The store would refuse the record, failing the task: the model is told instead, as for a
  // result the history cannot hold.
  const text = `Tool "${call.name}" returned a result of ${bytes} bytes, more than the session store keeps in one record (${maxRecordBytes} bytes); it was not kept.`
  return refusedResult(call, text, outputLimit, stamp)
}

/** The `error` result that replaces a result the history or the store cannot keep. */
function refusedResult(
  call: ToolCallPart,
  text: string,
  outputLimit: number,
  stamp: { id: string; createdAt: number },
): ToolResultMessage {
  return {
    role: 'tool',
    id: stamp.id,
    createdAt: stamp.createdAt,
    toolCallId: call.id,
    toolName: call.name,
    ...errorOutcome(capOutput(text, outputLimit)),
  }
}

/**
 * The size of `message`'s record in UTF-8 when it is over `maxRecordBytes`, else 0. Text alone
 * is measured by a bound (a UTF-16 unit takes at most 6 bytes of JSON), so that a result within
 * `toolOutputLimit` costs nothing more; other results (images, UI extras) are encoded to measure.
 */
function oversize(message: ToolResultMessage, maxRecordBytes: number): number {
  if (isPlainText(message)) {
    const units =
      message.outputText.length + message.toolName.length + message.toolCallId.length + message.id.length
    if (units * 6 + PLAIN_TEXT_OVERHEAD <= maxRecordBytes) return 0
  }
  return recordBytesOver(message, maxRecordBytes)
}

/** More than the fixed fields of a text-only result's line take (names, quotes, a timestamp, `v`). */
const PLAIN_TEXT_OVERHEAD = 256

/** The result message as the store will write it; text capped, see `resultMessage`. */
function keptMessage(
  call: ToolCallPart,
  outcome: ToolOutcome,
  outputLimit: number,
  stamp: { id: string; createdAt: number },
): ToolResultMessage {
  const message: ToolResultMessage = {
    role: 'tool',
    id: stamp.id,
    createdAt: stamp.createdAt,
    toolCallId: call.id,
    toolName: call.name,
    ...outcome,
    outputText: capOutput(outcome.outputText.toWellFormed(), outputLimit),
  }
  if (isPlainText(message)) {
    // Text alone (what most tools return) is its own JSON round trip: checked as it is, it is
    // what the store writes and reads back, and its JSON is written once (by the store) instead
    // of twice. One that fails the check takes the full path below, which reports it. Its empty
    // `parts` is a new array, as the round trip's would be: the outcome's own is not shared.
    message.parts = []
    try {
      return validateHistoryEvent(message) as ToolResultMessage
    } catch (error) {
      if (!CodecError.is(error)) throw error
    }
  }
  try {
    // Exactly what the store will write (after toJSON), so the event, the in-memory history and
    // the file agree, and a value JSON cannot hold fails here rather than the task.
    return roundTripHistoryEvent(message) as ToolResultMessage
  } catch (error) {
    if (!CodecError.is(error)) throw error
    // A tool returned something the history cannot hold (a text part, a bad or cyclic UI extra, a
    // BigInt): the model is told, and nothing invalid reaches the store.
    return refusedResult(
      call,
      `Tool "${call.name}" returned an invalid result: ${error.message}`,
      outputLimit,
      stamp,
    )
  }
}

/** The fields of a result of text alone, each a string but `createdAt` and `parts`. */
const PLAIN_TEXT_FIELDS: ReadonlySet<string> = new Set([
  'role',
  'id',
  'createdAt',
  'toolCallId',
  'toolName',
  'status',
  'outputText',
  'parts',
])

/**
 * Whether `JSON.parse(JSON.stringify(message))` gives `message` back field for field: only the
 * fields of a text result, strings, a finite clock reading other than -0, and no parts.
 */
function isPlainText(message: ToolResultMessage): boolean {
  for (const key of Object.keys(message)) {
    if (!PLAIN_TEXT_FIELDS.has(key)) return false
    const value = (message as unknown as Record<string, unknown>)[key]
    if (typeof value === 'string') continue
    if (key === 'createdAt' && Number.isFinite(value) && !Object.is(value, -0)) continue
    if (key === 'parts' && Array.isArray(value) && value.length === 0) continue
    return false
  }
  return true
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object without a string outputText'
  return `a ${typeof value}`
}

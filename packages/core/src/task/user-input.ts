import {
  type HistoryEvent,
  type ImagePart,
  joinText,
  roundTripHistoryEvent,
  type UserContentPart,
  type UserMessage,
} from '@kode/protocol'
import { unstampedRecordBytesOver } from '@kode/session'
import { AgentError } from '../errors.js'
import type { EventFields } from './task-events.js'

/** What `run` and `steer` accept: text, or text and images as parts. */
export type UserInput = string | readonly UserContentPart[]

/**
 * The mode a user message is sent in (the specification's "Koding mode"): a host-defined name
 * and optional context, persisted on the message and shown to the model before its text.
 */
export interface UserMode {
  mode: string
  modeContext?: string
}

/** The parts of a user input. */
export function userParts(input: UserInput): UserContentPart[] {
  return typeof input === 'string' ? [{ type: 'text', text: input }] : [...input]
}

/**
 * Checks an input before anything runs, so bad input fails at the call with a `CodecError` naming
 * the offending part, instead of failing the task later when it is persisted. Returns the parts as
 * they will be persisted (their JSON, after any `toJSON`), so what runs is what is written.
 */
export function validateUserInput(input: UserInput): UserContentPart[] {
  return validateUserMessage(input, undefined).parts
}

/**
 * The same, with the run's `mode` and `modeContext`: a `CodecError` for an empty or non-string
 * mode, an `AgentError` (`invalid_options`) for a `modeContext` without a `mode`.
 */
export function validateUserMessage(
  input: UserInput,
  options: { mode?: string | undefined; modeContext?: string | undefined } | undefined,
): { parts: UserContentPart[]; mode?: UserMode } {
  const { mode, modeContext } = options ?? {}
  if (mode === undefined && modeContext !== undefined) {
    throw new AgentError('invalid_options', 'modeContext needs a mode')
  }
  const fields = mode === undefined ? {} : modeContext === undefined ? { mode } : { mode, modeContext }
  const message = { role: 'user', id: 'input', createdAt: 0, parts: userParts(input), ...fields }
  const written = roundTripHistoryEvent(message as HistoryEvent) as UserMessage
  if (written.mode === undefined) return { parts: written.parts }
  const userMode: UserMode = { mode: written.mode }
  if (written.modeContext !== undefined) userMode.modeContext = written.modeContext
  return { parts: written.parts, mode: userMode }
}

/** Room for an id the agent's `createId` makes (a UUID takes 36 characters). */
const GENERATED_ID_ROOM = 128

/**
 * Refuses, with `AgentError` `input_too_large`, an input whose user message would be larger than
 * the store keeps in one record (`maxRecordBytes`), before anything is written: the task would
 * otherwise fail on the store's `record_too_large` once it had begun. Measured as the store
 * measures it, under `id` (or with room for a generated one) and the longest `createdAt`, so an
 * input this lets through is never refused by the store (one within a few hundred bytes of the
 * limit may be refused here).
 */
export function checkInputSize(
  message: { parts: UserContentPart[]; mode?: UserMode },
  id: string | undefined,
  maxRecordBytes: number | undefined,
): void {
  if (maxRecordBytes === undefined) return
  const room = id === undefined ? GENERATED_ID_ROOM : 0
  const record: UserMessage = {
    role: 'user',
    id: id ?? 'i',
    createdAt: 0,
    parts: message.parts,
    ...message.mode,
  }
  const over = unstampedRecordBytesOver(record, maxRecordBytes - room)
  if (over === 0) return
  throw new AgentError(
    'input_too_large',
    `the input is about ${over} bytes as a history record, over the session store's limit of ${maxRecordBytes} bytes (maxRecordBytes): nothing was written; send a smaller input (keep large payloads such as images out of it), or raise the limit`,
  )
}

/** The `user_message` event's fields for a user message: its text, its images and its mode. */
export function userMessageFields(message: UserMessage): EventFields<'user_message'> {
  const images = message.parts.filter((part): part is ImagePart => part.type !== 'text')
  const fields: EventFields<'user_message'> = { content: joinText(message.parts) }
  if (images.length > 0) fields.images = images
  if (message.mode !== undefined) fields.mode = message.mode
  if (message.modeContext !== undefined) fields.modeContext = message.modeContext
  return fields
}

import {
  decodeHistoryEvent,
  encodeHistoryEvent,
  type HistoryEvent,
  type ImagePart,
  joinText,
  type UserContentPart,
  type UserMessage,
} from '@kode/protocol'

/** What `run` and `steer` accept: text, or text and images as parts. */
export type UserInput = string | readonly UserContentPart[]

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
  const message = { role: 'user', id: 'input', createdAt: 0, parts: userParts(input) } as HistoryEvent
  return (decodeHistoryEvent(encodeHistoryEvent(message)) as UserMessage).parts
}

/** The `user_message` event's fields for a user message: its text and its images. */
export function userMessageFields(message: UserMessage): { content: string; images?: ImagePart[] } {
  const images = message.parts.filter((part): part is ImagePart => part.type !== 'text')
  return images.length > 0
    ? { content: joinText(message.parts), images }
    : { content: joinText(message.parts) }
}

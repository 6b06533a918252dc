import { type Static, Type } from '@sinclair/typebox'
import { DeveloperMessage } from '../messages.js'
import { TodoItem } from '../metadata.js'
import { ImageFilePart, ImageUrlPart } from '../parts.js'
import { event } from './base.js'

/** The user's input; `mode` and `modeContext` as the user message carries them. */
export const UserMessageEvent = event('user_message', {
  content: Type.String(),
  images: Type.Optional(Type.Array(Type.Union([ImageUrlPart, ImageFilePart]))),
  mode: Type.Optional(Type.String({ minLength: 1 })),
  modeContext: Type.Optional(Type.String()),
})
export type UserMessageEvent = Static<typeof UserMessageEvent>

export const DeveloperMessageEvent = event('developer_message', { item: DeveloperMessage })
export type DeveloperMessageEvent = Static<typeof DeveloperMessageEvent>

export const TodoChangeEvent = event('todo_change', { todos: Type.Array(TodoItem) })
export type TodoChangeEvent = Static<typeof TodoChangeEvent>

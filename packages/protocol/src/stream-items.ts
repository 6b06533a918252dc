import { type Static, Type } from '@sinclair/typebox'
import { AssistantMessage } from './messages.js'
import { ImagePart } from './parts.js'

const responseId = Type.Optional(Type.String())

/**
 * What a provider client yields while one response streams: deltas, tool-call start hints, then
 * exactly one `done` carrying the final `AssistantMessage` (also on abort, with `stopReason: 'aborted'`).
 */
export const StreamItem = Type.Union([
  Type.Object({ type: Type.Literal('thinking_delta'), text: Type.String(), responseId }),
  Type.Object({ type: Type.Literal('text_delta'), text: Type.String(), responseId }),
  Type.Object({ type: Type.Literal('image_delta'), part: ImagePart, responseId }),
  Type.Object({
    type: Type.Literal('tool_call_start'),
    toolCallId: Type.String(),
    toolName: Type.String(),
    responseId,
  }),
  Type.Object({ type: Type.Literal('done'), message: AssistantMessage }),
])
export type StreamItem = Static<typeof StreamItem>
export type StreamItemType = StreamItem['type']

/** A tool as offered to the model: `parameters` is a JSON Schema (a TypeBox schema is one). */
export const ToolDefinition = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    description: Type.String(),
    parameters: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'ToolDefinition' },
)
export type ToolDefinition = Static<typeof ToolDefinition>

import { type Static, Type } from '@sinclair/typebox'
import { Citation, ServerToolPart } from '../parts.js'
import { responseEvent } from './base.js'

// Streaming boundaries are explicit: a consumer never infers them.

export const ThinkingStartEvent = responseEvent('thinking_start', {})
export type ThinkingStartEvent = Static<typeof ThinkingStartEvent>

export const ThinkingDeltaEvent = responseEvent('thinking_delta', { content: Type.String() })
export type ThinkingDeltaEvent = Static<typeof ThinkingDeltaEvent>

export const ThinkingEndEvent = responseEvent('thinking_end', {})
export type ThinkingEndEvent = Static<typeof ThinkingEndEvent>

export const AssistantTextStartEvent = responseEvent('assistant_text_start', {})
export type AssistantTextStartEvent = Static<typeof AssistantTextStartEvent>

export const AssistantTextDeltaEvent = responseEvent('assistant_text_delta', { content: Type.String() })
export type AssistantTextDeltaEvent = Static<typeof AssistantTextDeltaEvent>

export const AssistantTextEndEvent = responseEvent('assistant_text_end', {})
export type AssistantTextEndEvent = Static<typeof AssistantTextEndEvent>

/** An image produced by the model: a saved file path, or a URL (data URL) when not saved. */
export const AssistantImageDeltaEvent = responseEvent('assistant_image_delta', {
  filePath: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
})
export type AssistantImageDeltaEvent = Static<typeof AssistantImageDeltaEvent>

/** UX hint that the model started a tool call; not execution. Closes any open assistant text first. */
export const ToolCallStartEvent = responseEvent('tool_call_start', {
  toolCallId: Type.String(),
  toolName: Type.String(),
})
export type ToolCallStartEvent = Static<typeof ToolCallStartEvent>

/** The final snapshot of a completed model response; exactly once per completed response. */
export const ResponseCompleteEvent = responseEvent('response_complete', {
  content: Type.String(),
  thinkingText: Type.Optional(Type.String()),
  /** Tools the provider ran on its side during the response (web search, code execution), in order. */
  serverTools: Type.Optional(Type.Array(ServerToolPart)),
  /** The sources the model cited, from every text part in order (see `Citation`). */
  citations: Type.Optional(Type.Array(Citation)),
})
export type ResponseCompleteEvent = Static<typeof ResponseCompleteEvent>

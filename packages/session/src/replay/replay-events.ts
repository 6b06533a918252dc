import {
  type AssistantImageDeltaEvent,
  type AssistantMessage,
  joinText,
  joinThinking,
  type ReplayEvent,
  type ResponseCompleteEvent,
  serverToolsOf,
  type ToolCallEvent,
  type ToolResultEvent,
  type ToolResultMessage,
  toolResultEventStatus,
  type UsageEvent,
  type UserMessage,
} from '@kode/protocol'

// The events one record replays as, built without state. Literal objects with the optional fields
// set afterwards, not spreads: replaying a long session builds hundreds of thousands of them, and
// objects of one shape keep the consumers' property reads fast.

/** The `user_message` of a user message. */
export function userMessageEvent(sessionId: string, message: UserMessage): ReplayEvent {
  const { parts, mode, modeContext } = message
  const event: Extract<ReplayEvent, { type: 'user_message' }> = {
    type: 'user_message',
    sessionId,
    timestamp: message.createdAt,
    content: joinText(parts),
  }
  const images = parts.filter((part) => part.type !== 'text')
  if (images.length > 0) event.images = images
  if (mode !== undefined) event.mode = mode
  if (modeContext !== undefined) event.modeContext = modeContext
  return event
}

/**
 * A response's events up to its tool calls, in the order they streamed: an
 * `assistant_image_delta` per image part, `response_complete`, then `usage` when the response
 * carries usage and is not an error.
 */
export function emitResponse(
  sessionId: string,
  message: AssistantMessage,
  emit: (event: ReplayEvent) => void,
): void {
  const { createdAt: timestamp, responseId, parts } = message
  for (const part of parts) {
    // Images stream before the response completes, so they are replayed before it too.
    if (part.type === 'image_file' || part.type === 'image_url') {
      const image: AssistantImageDeltaEvent = { type: 'assistant_image_delta', sessionId, timestamp }
      if (responseId !== undefined) image.responseId = responseId
      if (part.type === 'image_file') image.filePath = part.path
      else image.url = part.url
      emit(image)
    }
  }
  const complete: ResponseCompleteEvent =
    responseId === undefined
      ? { type: 'response_complete', sessionId, timestamp, content: joinText(parts) }
      : { type: 'response_complete', sessionId, timestamp, responseId, content: joinText(parts) }
  const thinkingText = joinThinking(parts)
  if (thinkingText !== undefined) complete.thinkingText = thinkingText
  const serverTools = serverToolsOf(parts)
  if (serverTools !== undefined) complete.serverTools = serverTools
  emit(complete)
  if (message.usage && !message.isApiError && message.stopReason !== 'error') {
    const usage: UsageEvent =
      responseId === undefined
        ? { type: 'usage', sessionId, timestamp, usage: message.usage }
        : { type: 'usage', sessionId, timestamp, responseId, usage: message.usage }
    if (message.costUsd !== undefined) usage.costUsd = message.costUsd
    emit(usage)
  }
}

/** The `tool_call` of one tool-call part of a response. */
export function toolCallEvent(
  sessionId: string,
  message: AssistantMessage,
  part: { id: string; name: string; argumentsJson: string },
): ToolCallEvent {
  const { createdAt: timestamp, responseId } = message
  return responseId === undefined
    ? {
        type: 'tool_call',
        sessionId,
        timestamp,
        toolCallId: part.id,
        toolName: part.name,
        arguments: part.argumentsJson,
      }
    : {
        type: 'tool_call',
        sessionId,
        timestamp,
        responseId,
        toolCallId: part.id,
        toolName: part.name,
        arguments: part.argumentsJson,
      }
}

/** The `tool_result` of a tool result, with the response id of the call it answers. */
export function toolResultEvent(
  sessionId: string,
  result: ToolResultMessage,
  responseId: string | undefined,
  isLastInTurn: boolean,
): ToolResultEvent {
  const { createdAt: timestamp, toolCallId, toolName, outputText } = result
  const status = toolResultEventStatus(result.status)
  const event: ToolResultEvent =
    responseId === undefined
      ? {
          type: 'tool_result',
          sessionId,
          timestamp,
          toolCallId,
          toolName,
          result: outputText,
          status,
          isLastInTurn,
        }
      : {
          type: 'tool_result',
          sessionId,
          timestamp,
          responseId,
          toolCallId,
          toolName,
          result: outputText,
          status,
          isLastInTurn,
        }
  if (result.uiExtra) event.uiExtra = result.uiExtra
  if (result.taskMetadata) event.taskMetadata = result.taskMetadata
  return event
}

/**
 * The response id an approval request's events carry: for a sub-agent's call recorded in its
 * parent's history, the sub-agent's response that asked for it (`subAgentResponseId`); otherwise,
 * and in histories written before that was recorded, the record's own `responseId`.
 */
export function approvalResponseId(request: {
  responseId?: string | undefined
  subAgentResponseId?: string | undefined
}): string | undefined {
  return request.subAgentResponseId ?? request.responseId
}

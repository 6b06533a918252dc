import type { LLMRequest } from '../../types.js'

/**
 * The tool choice a request body carries. Every built-in API refuses a tool choice in a request
 * that declares no tools (Anthropic: "tool_choice may only be specified while providing tools";
 * OpenAI: "'tool_choice' is only allowed when 'tools' are specified"; Gemini: "Function calling
 * config is set without function_declarations"). Without tools, `auto` and `none` mean what no
 * choice means, so they are left out; a choice that forces a call is sent, so the API says why it
 * cannot be honoured rather than the model silently answering in text.
 */
export function sentToolChoice(
  choice: LLMRequest['toolChoice'],
  declaresTools: boolean,
): LLMRequest['toolChoice'] {
  if (declaresTools) return choice
  return choice === 'auto' || choice === 'none' ? undefined : choice
}

/**
 * Whether the request declares tools the provider runs itself for `api` (web search, ...): they
 * are tools to the API, so a tool choice applies to them too (`none` keeps the model from them).
 */
export function declaresProviderTools(request: LLMRequest, api: string): boolean {
  return (request.providerTools?.[api]?.length ?? 0) > 0
}

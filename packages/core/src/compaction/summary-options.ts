import type { LLMRequest } from '@kode/providers'

/**
 * The task's `providerOptions` as the summary request carries them: without Anthropic's `thinking`.
 * The summary request asks for no reasoning (it takes no `reasoning` setting either), and a turn's
 * thinking budget does not fit it: Anthropic refuses a request whose `budget_tokens` is not below
 * its `max_tokens`, and the summary's own output budget (15% of the window) is often the smaller
 * on a small window; where it fits, the thinking would spend the summary's budget and cut it off.
 * The other fields (a gateway's route, a user id, `top_k`) go with it unchanged.
 */
export function summaryProviderOptions(
  options: LLMRequest['providerOptions'],
): LLMRequest['providerOptions'] {
  const anthropic = options?.anthropic
  if (anthropic === undefined || !Object.hasOwn(anthropic, 'thinking')) return options
  const { thinking: _thinking, ...rest } = anthropic
  return { ...options, anthropic: rest }
}

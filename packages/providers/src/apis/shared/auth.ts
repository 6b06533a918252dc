/** `Authorization: Bearer <key>` when there is a key (local servers often need none). */
export function bearerAuth(apiKey: string | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {}
}

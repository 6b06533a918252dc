/**
 * The URL of a request: the adapter's `path` (which may carry a query of its own, as Gemini's
 * `?alt=sse`) after the root's path. A root with a query (Azure's classic
 * `/openai/deployments/<name>?api-version=…`, a gateway's `?tenant=…`) keeps it, joined before the
 * path's, rather than having the path appended to the query.
 */
export function requestUrl(root: string, path: string): string {
  const at = root.indexOf('?')
  if (at < 0) return root + path
  const [own, ownQuery = ''] = splitOnce(path, '?')
  const rootQuery = root.slice(at + 1).replace(/#.*$/, '')
  const query = [rootQuery, ownQuery].filter((q) => q !== '').join('&')
  return root.slice(0, at).replace(/\/+$/, '') + own + (query ? `?${query}` : '')
}

function splitOnce(text: string, separator: string): [string, string?] {
  const at = text.indexOf(separator)
  return at < 0 ? [text] : [text.slice(0, at), text.slice(at + 1)]
}

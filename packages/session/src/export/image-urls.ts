/**
 * How an exported page shows the URL of an image it does not embed (a web image is linked, never
 * loaded):
 * - `'origin-and-path'` (the default): scheme, host and path only. A transcript is a file people
 *   share, and a signed image URL carries its signature in the query (`X-Amz-Signature`, `sig`,
 *   `token`); the query, the fragment and a `user:password@` are left out. The link may then no
 *   longer open a private image.
 * - `'as-given'`: the URL as the history has it, query and all.
 */
export type ImageUrls = 'origin-and-path' | 'as-given'

/** The default of `ExportHtmlOptions.imageUrls`. */
export const DEFAULT_IMAGE_URLS: ImageUrls = 'origin-and-path'

// `scheme://` and what comes before the last `@` of the authority: a `user:password@`.
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/]*@/i

/** `url` as `mode` shows it. Text, not a parsed URL: what is kept stays as the history spells it. */
export function shownImageUrl(url: string, mode: ImageUrls): string {
  switch (mode) {
    case 'as-given':
      return url
    case 'origin-and-path': {
      const end = url.search(/[?#]/)
      return (end === -1 ? url : url.slice(0, end)).replace(USERINFO, '$1')
    }
  }
}

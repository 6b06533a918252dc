import { originAndPath, ProviderError } from '../../transport/errors.js'

/** Gemini `fileData`: a file by URI, with the media type the API requires next to it. */
export interface GoogleFileData {
  fileUri: string
  mimeType: string
}

/**
 * Image media types by file extension, for the formats Gemini's image docs list (PNG, JPEG,
 * WEBP, HEIC, HEIF) and GIF. Kode's `image_url` part carries no media type, so the URL's path is
 * all there is to go on.
 */
const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
}

/**
 * An http(s) image URL as Gemini `fileData`. The API refuses `fileData` without `mimeType`, so an
 * image whose type its path's extension does not name fails here, before anything is sent, with a
 * non-retryable `invalid_request` quoting the URL as origin and path (its query may hold a token).
 */
export function imageFileData(url: string): GoogleFileData {
  const parsed = parseUrl(url)
  const extension = parsed?.pathname.match(/\.([a-z0-9]+)$/i)?.[1]?.toLowerCase()
  const mimeType = extension === undefined ? undefined : IMAGE_TYPES[extension]
  if (mimeType !== undefined) return { fileUri: url, mimeType }
  const where = parsed ? originAndPath(parsed) : 'an unreadable URL'
  throw new ProviderError(
    `the media type of the image at ${where} cannot be told from its path; Gemini needs one for an image by URL (name the file .png, .jpg, .jpeg, .webp, .gif, .heic or .heif, or send it as a data URL)`,
    { code: 'invalid_request', retryable: false },
  )
}

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url)
  } catch {
    return undefined
  }
}

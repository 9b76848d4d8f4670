/**
 * The media types fw writes itself, named once. A header carries the full type with its charset;
 * the OpenAPI document keys a body by the bare media type (`text/plain`), as the committed
 * document always has.
 */

/** JSON, in answers and in the API description: UTF-8 by definition (RFC 8259), so no charset. */
export const JSON_TYPE = 'application/json';
/** Text as the API description names it. */
export const TEXT_MEDIA_TYPE = 'text/plain';
/** Text as an answer's Content-Type says it. */
export const TEXT_TYPE = `${TEXT_MEDIA_TYPE}; charset=utf-8`;
/** Bytes whose type nothing names. */
export const OCTET_STREAM = 'application/octet-stream';
/** A server-sent event stream. */
export const EVENT_STREAM = 'text/event-stream';

/** Path templates (`{*}` one segment, `{**}` any) → Envoy's uri_template matcher. */
import type { envoy } from '../../../xds/proto.js';

const MATCH_ONE = '{*}';
const MATCH_ANY = '{**}';

export const URI_TEMPLATE_TYPE = 'envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig';

export function containsPathTemplate(path: string): boolean {
  return path.includes(MATCH_ONE) || path.includes(MATCH_ANY);
}

export function pathTemplateMatcher(
  path: string,
): envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig.$Properties {
  return { path_template: path.replaceAll(MATCH_ANY, '**').replaceAll(MATCH_ONE, '*') };
}

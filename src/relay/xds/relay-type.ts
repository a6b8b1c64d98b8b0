/** What a relay stream serves: a snapshot type, or SDS secrets (served live, never from a snapshot). */
import { XDS_TYPE_URL, type XdsType } from '../../xds/type-urls.js';
import { SECRET_TYPE_URL } from '../sds/secret-material.js';

export type RelayType = XdsType | 'secrets';

export const relayTypeUrl = (type: RelayType): string => (type === 'secrets' ? SECRET_TYPE_URL : XDS_TYPE_URL[type]);

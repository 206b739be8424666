/** What the network routes and the host's network area module share. */
export { networkSettings, type NetworkSettings } from './settings';

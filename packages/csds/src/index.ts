export {
  answerClientStatus,
  type ClientStatusRegistry,
  type ClientStatusSource,
  clientStatusRoutes,
  createClientStatusRegistry,
} from "./csds-service.js";
export { formatClientConfig } from "./format.js";

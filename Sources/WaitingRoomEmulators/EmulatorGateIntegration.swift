/// The Queue-it integration configuration `waitingroom gate --emulator` runs with, and its event:
/// ignore `/static/`, queue every other page in the demo room `sale`, whose queue is the
/// embedded emulator. The gate and its benchmark (`bench queueit`) share it.
package enum EmulatorGateIntegration {
    /// The Queue-it event the default integration queues (the demo room `sale`, 1 visitor/s).
    package static let queueItEvent = "sale"

    /// The emulator's default integration configuration, in Queue-it's published form.
    package static func queueItJSON(queueDomain: String) -> String {
        """
        {"Description": "waitingroom gate --emulator", "CustomerId": "demo", "AccountId": "demo", "Version": 1,
         "Integrations": [
          {"Name": "static", "ActionType": "Ignore", "EventId": "", "QueueDomain": "",
           "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
             {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/static/",
              "IsNegative": false, "IsIgnoreCase": true}]}]},
          {"Name": "everything", "ActionType": "Queue", "EventId": "\(queueItEvent)", "QueueDomain": "\(queueDomain)", "CookieDomain": "",
           "ExtendCookieValidity": true, "CookieValidityMinute": 20, "RedirectLogic": "AllowTParameter", "ForcedTargetUrl": "",
           "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
             {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/",
              "IsNegative": false, "IsIgnoreCase": false}]}]}
         ]}
        """
    }
}

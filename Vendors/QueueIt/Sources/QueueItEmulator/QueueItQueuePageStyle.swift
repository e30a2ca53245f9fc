import WaitingRoomEmulatorKit

/// The queue page's colours on the kit's waiting-page style sheet.
enum QueueItQueuePageStyle {
    static let css = EmulatorPageStyle(
        background: "#f3f5f9", text: "#1b2330", muted: "#5a6b85", track: "#dde3ec", fill: "#2f6fdd", status: "#3a4a60",
        extra: ".vendor{letter-spacing:.05em;text-transform:uppercase}\n.meta,.links{color:#5a6b85;font-size:.85rem}\n"
            + ".sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}"
    ).css
}

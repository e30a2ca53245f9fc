import WaitingRoomEmulatorKit

/// The waiting-room page's colours on the kit's waiting-page style sheet.
enum NetFUNNELWaitingRoomStyle {
    static let css = EmulatorPageStyle(
        background: "#eef4f1", text: "#17261f", muted: "#4f6b5d", track: "#d5e2db", fill: "#1f9a62", status: "#2f4439",
        extra: ".meta{color:#4f6b5d;font-size:.85rem}\nbody.blocked .fill{background:#c0392b}"
    ).css
}

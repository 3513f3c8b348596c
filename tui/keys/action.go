// Package keys is the action registry of cairn-tui: every bindable action
// with its ID, a bubbles key.Binding (its keys, and the key and word the
// hint line shows), help text and hint priority, the user's overrides and
// the conflict check. Hints, help, bubbles components (the preview's
// viewport KeyMap) and routing all read it, so they cannot drift apart.
package keys

import "github.com/charmbracelet/bubbles/key"

// ID names an action; it is the key of tui.keys.<ID> in the config file.
type ID string

// The global, navigation, workspace and artifact actions, then the
// transfers, the shell and the preview's; docs/tui.md#keys lists them all
// with their default keys.
const (
	Help        ID = "help"
	Messages    ID = "messages"
	Filter      ID = "filter"
	Back        ID = "back"
	QuitOrBack  ID = "quit_or_back"
	Quit        ID = "quit"
	Refresh     ID = "refresh"
	FocusNext   ID = "focus_next"
	FocusPrev   ID = "focus_prev"
	Zoom        ID = "zoom"
	Jump1       ID = "jump_1"
	Jump2       ID = "jump_2"
	Suspend     ID = "suspend"
	Down        ID = "down"
	Up          ID = "up"
	Top         ID = "top"
	Bottom      ID = "bottom"
	HalfDown    ID = "half_down"
	HalfUp      ID = "half_up"
	PageDown    ID = "page_down"
	PageUp      ID = "page_up"
	Open        ID = "open"
	BackNav     ID = "back_nav"
	SortNext    ID = "sort_next"
	SortReverse ID = "sort_reverse"
	CopyName    ID = "copy_name"
	CopyID      ID = "copy_id"
	WsNew       ID = "ws_new"
	WsEdit      ID = "ws_edit"
	WsProvision ID = "ws_provision"
	WsTeardown  ID = "ws_teardown"
	WsDelete    ID = "ws_delete"
	WsSweep     ID = "ws_sweep"
	WsTouch     ID = "ws_touch"
	ArtEdit     ID = "art_edit"
	ArtDelete   ID = "art_delete"
	MissingOnly ID = "missing_only"

	Transfers   ID = "transfers"
	Jump3       ID = "jump_3"
	Shell       ID = "shell"
	VolSave     ID = "vol_save"
	Preview     ID = "preview"
	ArtUpload   ID = "art_upload"
	ArtReplace  ID = "art_replace"
	ArtDownload ID = "art_download"
	VolLoad     ID = "vol_load"
	VolUpdate   ID = "vol_update"
	HitNext     ID = "hit_next"
	HitPrev     ID = "hit_prev"
	Wrap        ID = "wrap"
	PvDownload  ID = "preview_download"
	TrCancel    ID = "tr_cancel"
	TrClear     ID = "tr_clear"

	// The files pane (a workspace volume's directories).
	Files        ID = "files"
	FilesParent  ID = "files_parent"
	FilesPreview ID = "files_preview"
	FilesSave    ID = "files_save"
	FilesLoad    ID = "files_load"
	FilesUnpack  ID = "files_unpack"
	FilesEdit    ID = "files_edit"
	FilesMkdir   ID = "files_mkdir"
	FilesUpload  ID = "files_upload"
	FilesMove    ID = "files_move"
	FilesDelete  ID = "files_delete"

	// The fleet console: the command palette, marks, the shells and audit
	// screens.
	Palette    ID = "palette"
	Mark       ID = "mark"
	MarkAll    ID = "mark_all"
	ShellsOf   ID = "ws_shells"
	AuditOf    ID = "ws_audit"
	ShellKill  ID = "shell_kill"
	AuditTypes ID = "audit_type"
	AllShells  ID = "shells"
	AllAudit   ID = "audit"
	Contexts   ID = "contexts"

	// A workspace's snapshots: the screen, and what it does.
	Snapshots   ID = "ws_snapshots"
	SnapTake    ID = "snap_take"
	SnapRestore ID = "snap_restore"
	SnapFork    ID = "ws_fork"
	SnapDelete  ID = "snap_delete"
)

// Scope says where an action is reachable: everywhere, in every list, or
// on one screen.
type Scope string

const (
	ScopeGlobal     Scope = "global"
	ScopeNav        Scope = "navigation"
	ScopeWorkspaces Scope = "workspaces"
	ScopeArtifacts  Scope = "artifacts"
	// ScopeLists is both workspace screens: the workspaces list and a
	// workspace's artifacts (the shell, saving a volume file, the files).
	ScopeLists     Scope = "workspaces and artifacts"
	ScopePreview   Scope = "preview"
	ScopeTransfers Scope = "transfers"
	// ScopeFiles is the files pane: one directory of a workspace volume.
	ScopeFiles Scope = "files"
	// ScopeShells is the live shells of every replica; ScopeAudit the
	// audit trail.
	ScopeShells Scope = "shells"
	ScopeAudit  Scope = "audit"
	// ScopeSnapshots is one workspace's snapshots.
	ScopeSnapshots Scope = "snapshots"
)

// Scopes lists the scopes in help order.
func Scopes() []Scope {
	return []Scope{ScopeGlobal, ScopeNav, ScopeLists, ScopeWorkspaces, ScopeArtifacts, ScopeFiles, ScopeSnapshots, ScopeShells, ScopeAudit,
		ScopePreview, ScopeTransfers}
}

// Screens lists the screen scopes with the shared scopes each context adds
// to global and navigation: what the conflict check walks.
func Screens() map[Scope][]Scope {
	return map[Scope][]Scope{
		ScopeWorkspaces: {ScopeLists}, ScopeArtifacts: {ScopeLists},
		ScopeFiles: nil, ScopeSnapshots: nil, ScopeShells: nil, ScopeAudit: nil, ScopePreview: nil, ScopeTransfers: nil,
	}
}

// Action is one bindable action.
type Action struct {
	ID ID
	// Binding holds the keys (the defaults, or the user's override) and,
	// once New resolved it, the hint: the first key and Short.
	Binding key.Binding
	Short   string // the hint word
	Help    string // the help line
	Scope   Scope
	// Priority orders hints: higher stays longer; 0 never shows in hints.
	Priority int
	// Mutates marks actions that read-only mode disables and hides.
	Mutates bool
}

// Defaults returns every action with its default keys, in help order.
func Defaults() []Action {
	return []Action{
		{ID: Help, Binding: on("?"), Short: "help", Help: "help overlay", Scope: ScopeGlobal, Priority: 100},
		{ID: Messages, Binding: on("!"), Short: "messages", Help: "messages log", Scope: ScopeGlobal},
		{ID: Back, Binding: on("esc"), Short: "back", Help: "close modal, dismiss error, clear filter, go back", Scope: ScopeGlobal},
		{ID: QuitOrBack, Binding: on("q"), Short: "quit", Help: "back; quit at the root", Scope: ScopeGlobal, Priority: 90},
		{ID: Quit, Binding: on("ctrl+c"), Short: "quit", Help: "quit", Scope: ScopeGlobal},
		{ID: Refresh, Binding: on("r", "ctrl+r"), Short: "refresh", Help: "list again (resync)", Scope: ScopeGlobal, Priority: 20},
		{ID: Jump1, Binding: on("1"), Short: "workspaces", Help: "jump to workspaces", Scope: ScopeGlobal},
		{ID: Jump2, Binding: on("2"), Short: "artifacts", Help: "jump to the current artifacts", Scope: ScopeGlobal},
		{ID: Jump3, Binding: on("3"), Short: "transfers", Help: "jump to the transfers", Scope: ScopeGlobal},
		{ID: Transfers, Binding: on("t"), Short: "transfers", Help: "transfers: every upload and download since start", Scope: ScopeGlobal, Priority: 25},
		{ID: Palette, Binding: on(":"), Short: "command", Help: "command palette: :ws :art :files :audit :shells :transfers :ctx :sweep :help :q", Scope: ScopeGlobal, Priority: 19},
		{ID: AllShells, Binding: on("W"), Short: "all shells", Help: "every live shell on every replica (:shells)", Scope: ScopeGlobal},
		{ID: AllAudit, Binding: on("A"), Short: "audit", Help: "the whole audit trail, newest first (:audit; admin scope)", Scope: ScopeGlobal},
		{ID: Contexts, Binding: on("C"), Short: "contexts", Help: "switch the server: the palette at :ctx with the config file's contexts", Scope: ScopeGlobal},
		{ID: Suspend, Binding: on("ctrl+z"), Short: "suspend", Help: "suspend to the shell; resync on return", Scope: ScopeGlobal},
		{ID: Down, Binding: on("j", "down"), Short: "down", Help: "move down", Scope: ScopeNav},
		{ID: Up, Binding: on("k", "up"), Short: "up", Help: "move up", Scope: ScopeNav},
		{ID: Top, Binding: on("g", "home"), Short: "top", Help: "first row", Scope: ScopeNav},
		{ID: Bottom, Binding: on("G", "end"), Short: "bottom", Help: "last row", Scope: ScopeNav},
		{ID: HalfDown, Binding: on("ctrl+d"), Short: "half down", Help: "half a page down", Scope: ScopeNav},
		{ID: HalfUp, Binding: on("ctrl+u"), Short: "half up", Help: "half a page up", Scope: ScopeNav},
		{ID: PageDown, Binding: on("pgdown"), Short: "page down", Help: "a page down", Scope: ScopeNav},
		{ID: PageUp, Binding: on("pgup"), Short: "page up", Help: "a page up", Scope: ScopeNav},
		{ID: Open, Binding: on("enter", "l", "right"), Short: "open", Help: "drill in", Scope: ScopeNav, Priority: 80},
		{ID: BackNav, Binding: on("h", "left"), Short: "back", Help: "go back", Scope: ScopeNav, Priority: 75},
		{ID: Filter, Binding: on("/"), Short: "filter", Help: "filter by name and description; enter keeps, esc clears", Scope: ScopeNav, Priority: 60},
		{ID: SortNext, Binding: on("o"), Short: "sort", Help: "cycle the sort column", Scope: ScopeNav, Priority: 15},
		{ID: SortReverse, Binding: on("O"), Short: "reverse", Help: "reverse the sort", Scope: ScopeNav},
		{ID: CopyName, Binding: on("y"), Short: "copy", Help: "copy the name (OSC 52; tmux needs set-clipboard on)", Scope: ScopeNav, Priority: 30},
		{ID: CopyID, Binding: on("Y"), Short: "copy ID", Help: "copy the ID", Scope: ScopeNav},
		{ID: FocusNext, Binding: on("tab"), Short: "detail", Help: "focus list ↔ detail", Scope: ScopeNav, Priority: 10},
		{ID: FocusPrev, Binding: on("shift+tab"), Short: "focus back", Help: "focus the previous pane", Scope: ScopeNav},
		{ID: Zoom, Binding: on("z"), Short: "zoom", Help: "zoom the focused pane", Scope: ScopeNav},
		{ID: Mark, Binding: on(" "), Short: "mark", Help: "mark the row (bulk actions act on the marks; esc clears them)", Scope: ScopeLists, Priority: 12},
		{ID: MarkAll, Binding: on("ctrl+a"), Short: "mark all", Help: "mark every visible (filtered) row", Scope: ScopeLists},
		{ID: Shell, Binding: on("s"), Short: "shell", Help: "open a shell in the workspace (volume at /mnt/cairn/ws)", Scope: ScopeLists, Priority: 68, Mutates: true},
		{ID: VolSave, Binding: on("i"), Short: "save from volume", Help: "save a volume file as a new artifact", Scope: ScopeLists, Priority: 35, Mutates: true},
		{ID: Files, Binding: on("f"), Short: "files", Help: "browse the workspace volume's files (needs volume READY)", Scope: ScopeLists, Priority: 37},
		{ID: ShellsOf, Binding: on("w"), Short: "shells", Help: "the workspace's live shells (:shells lists every one)", Scope: ScopeLists, Priority: 8},
		{ID: AuditOf, Binding: on("a"), Short: "audit", Help: "the workspace's audit trail (:audit lists every one; admin scope)", Scope: ScopeLists, Priority: 7},
		{ID: Snapshots, Binding: on("P"), Short: "snapshots", Help: "the workspace's snapshots: take, restore, fork, delete", Scope: ScopeLists, Priority: 4},
		{ID: WsNew, Binding: on("n"), Short: "new", Help: "new workspace", Scope: ScopeWorkspaces, Priority: 70, Mutates: true},
		{ID: WsEdit, Binding: on("e"), Short: "edit", Help: "rename / describe the workspace", Scope: ScopeWorkspaces, Priority: 65, Mutates: true},
		{ID: WsProvision, Binding: on("v"), Short: "provision", Help: "provision the volume (NONE → READY)", Scope: ScopeWorkspaces, Priority: 50, Mutates: true},
		{ID: WsTeardown, Binding: on("V"), Short: "tear down", Help: "tear down the volume", Scope: ScopeWorkspaces, Priority: 40, Mutates: true},
		{ID: WsDelete, Binding: on("D", "delete"), Short: "delete", Help: "delete the workspace", Scope: ScopeWorkspaces, Priority: 45, Mutates: true},
		{ID: WsTouch, Binding: on("T"), Short: "touch", Help: "touch the workspace: postpone its expiry by its ttl and its idle archiving", Scope: ScopeWorkspaces, Priority: 3, Mutates: true},
		{ID: WsSweep, Binding: on("S"), Short: "sweep", Help: "sweep the workspace now: flag objects gone from the store (admin scope)", Scope: ScopeLists, Priority: 5, Mutates: true},
		{ID: ArtEdit, Binding: on("e"), Short: "edit", Help: "rename / describe the artifact", Scope: ScopeArtifacts, Priority: 65, Mutates: true},
		{ID: ArtDelete, Binding: on("D", "delete"), Short: "delete", Help: "delete the artifact", Scope: ScopeArtifacts, Priority: 45, Mutates: true},
		{ID: MissingOnly, Binding: on("m"), Short: "missing", Help: "toggle missing-only", Scope: ScopeArtifacts, Priority: 55},
		{ID: Preview, Binding: on("p"), Short: "preview", Help: "preview the content (enter too)", Scope: ScopeArtifacts},
		{ID: ArtUpload, Binding: on("u"), Short: "upload", Help: "upload a local file as a new artifact", Scope: ScopeArtifacts, Priority: 70, Mutates: true},
		{ID: ArtReplace, Binding: on("U"), Short: "replace", Help: "replace the content from a local file (repairs MISSING)", Scope: ScopeArtifacts, Priority: 50, Mutates: true},
		{ID: ArtDownload, Binding: on("d"), Short: "download", Help: "download the content to a local file", Scope: ScopeArtifacts, Priority: 67},
		{ID: VolLoad, Binding: on("L"), Short: "load into volume", Help: "write the content to a file of the volume (overwrites it)", Scope: ScopeArtifacts, Priority: 20, Mutates: true},
		{ID: VolUpdate, Binding: on("I"), Short: "update from volume", Help: "replace the content from a volume file (repairs MISSING)", Scope: ScopeArtifacts, Priority: 18, Mutates: true},
		{ID: FilesParent, Binding: on("backspace"), Short: "up", Help: "up to the parent directory (h and left too; never above /mnt/cairn/ws)", Scope: ScopeFiles},
		{ID: FilesPreview, Binding: on("p"), Short: "preview", Help: "preview the file's first 64 KiB (enter too)", Scope: ScopeFiles},
		{ID: FilesSave, Binding: on("i"), Short: "save", Help: "save the file — or the directory, packed as tar.gz — as a new artifact", Scope: ScopeFiles, Priority: 70, Mutates: true},
		{ID: FilesLoad, Binding: on("L"), Short: "load here", Help: "load an artifact into this directory (overwrites a file of its name)", Scope: ScopeFiles, Priority: 65, Mutates: true},
		{ID: FilesUnpack, Binding: on("X"), Short: "unpack here", Help: "unpack an archive artifact (tar.gz, zip) into a new directory here", Scope: ScopeFiles, Priority: 62, Mutates: true},
		{ID: FilesEdit, Binding: on("e"), Short: "edit", Help: "edit a text file (up to 1 MiB) in $EDITOR; written back only over the version read", Scope: ScopeFiles, Priority: 72, Mutates: true},
		{ID: FilesMkdir, Binding: on("n"), Short: "new dir", Help: "make a new directory here", Scope: ScopeFiles, Priority: 58, Mutates: true},
		{ID: FilesUpload, Binding: on("u"), Short: "upload here", Help: "upload a local file into this directory (up to the server's files.write.maxBytes)", Scope: ScopeFiles, Priority: 56, Mutates: true},
		{ID: FilesMove, Binding: on("R"), Short: "rename", Help: "rename or move the entry (its path, edited)", Scope: ScopeFiles, Priority: 54, Mutates: true},
		{ID: FilesDelete, Binding: on("D", "delete"), Short: "delete", Help: "delete the entry: a file or link after y, a directory and all in it after its typed name", Scope: ScopeFiles, Priority: 52, Mutates: true},
		{ID: SnapTake, Binding: on("n"), Short: "take", Help: "take a snapshot of the volume (name optional; live while a container mounts it)", Scope: ScopeSnapshots, Priority: 70, Mutates: true},
		{ID: SnapRestore, Binding: on("R"), Short: "restore", Help: "restore the snapshot into this workspace's volume, replacing all in it (after the workspace's typed name)", Scope: ScopeSnapshots, Priority: 65, Mutates: true},
		{ID: SnapFork, Binding: on("F"), Short: "fork", Help: "fork the workspace: a new workspace whose volume holds a snapshot taken now", Scope: ScopeSnapshots, Priority: 60, Mutates: true},
		{ID: SnapDelete, Binding: on("D", "delete"), Short: "delete", Help: "delete the snapshot (asks first)", Scope: ScopeSnapshots, Priority: 55, Mutates: true},
		{ID: ShellKill, Binding: on("D", "delete"), Short: "kill", Help: "end the shell (asks first; admin scope)", Scope: ScopeShells, Priority: 60, Mutates: true},
		{ID: AuditTypes, Binding: on("T"), Short: "type", Help: "cycle the type shown: every type, then each in turn", Scope: ScopeAudit, Priority: 50},
		{ID: HitNext, Binding: on("n"), Short: "next hit", Help: "next search hit", Scope: ScopePreview, Priority: 50},
		{ID: HitPrev, Binding: on("N"), Short: "previous hit", Help: "previous search hit", Scope: ScopePreview},
		{ID: Wrap, Binding: on("w"), Short: "wrap", Help: "toggle soft wrap", Scope: ScopePreview, Priority: 40},
		{ID: PvDownload, Binding: on("d"), Short: "download", Help: "download the whole content", Scope: ScopePreview, Priority: 60},
		{ID: TrCancel, Binding: on("x"), Short: "cancel", Help: "cancel the transfer (past 50 % asks first)", Scope: ScopeTransfers, Priority: 70},
		{ID: TrClear, Binding: on("c"), Short: "clear", Help: "clear the finished transfers", Scope: ScopeTransfers, Priority: 50},
	}
}

// on is a binding of keys, its hint filled in by New.
func on(keys ...string) key.Binding { return key.NewBinding(key.WithKeys(keys...)) }
